package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "./data", c.DataDir)
	assert.Equal(t, filepath.Join("data", "holdco.db"), c.DatabaseURL)
	assert.True(t, c.EmbeddedTemporal())
	assert.Equal(t, "default", c.TemporalNamespace)
	assert.Equal(t, ":8080", c.APIAddr)
	assert.Equal(t, ":8083", c.SitesAddr)
	assert.Equal(t, "http://localhost:8083", c.ResolveSitesURL("[::]:8083"))
	assert.Equal(t, 7233, c.TemporalPort)
	assert.Equal(t, 8233, c.TemporalUIPort)
	assert.Equal(t, slog.LevelInfo, c.LogLevel)
	assert.Equal(t, 15*time.Second, c.ShutdownTimeout)
	assert.False(t, c.PaymentsEnabled())
	assert.Equal(t, int64(10), c.CreditPriceCents)
	assert.Equal(t, int64(100), c.FounderMonthlyCredits)
}

func TestOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"DATABASE_URL":            "postgres://u:p@db:5432/holdco",
		"TEMPORAL_ADDRESS":        "temporal:7233",
		"TEMPORAL_NAMESPACE":      "prod",
		"HOLDCO_TEMPORAL_UI_PORT": "0",
		"HOLDCO_LOG_LEVEL":        "debug",
		"HOLDCO_LOG_FORMAT":       "json",
	}))
	require.NoError(t, err)
	assert.True(t, IsPostgres(c.DatabaseURL))
	assert.False(t, c.EmbeddedTemporal())
	assert.Equal(t, 0, c.TemporalUIPort)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
	assert.Equal(t, "postgres://u:xxxxx@db:5432/holdco", Redact(c.DatabaseURL))
}

func TestRedactHidesAPasswordQueryParameter(t *testing.T) {
	got := Redact("postgres://u@db:5432/holdco?sslmode=require&password=s3cret&sslpassword=k3y")
	assert.NotContains(t, got, "s3cret")
	assert.NotContains(t, got, "k3y")
	assert.Contains(t, got, "sslmode=require")
}

func TestErrorsNameTheVariable(t *testing.T) {
	cases := map[string]struct{ env map[string]string }{
		"DATABASE_URL":            {map[string]string{"DATABASE_URL": "postgres://u:p@[::1/db"}},
		"HOLDCO_TEMPORAL_PORT":    {map[string]string{"HOLDCO_TEMPORAL_PORT": "70000"}},
		"HOLDCO_TEMPORAL_UI_PORT": {map[string]string{"HOLDCO_TEMPORAL_UI_PORT": "ui"}},
		"HOLDCO_API_ADDR":         {map[string]string{"HOLDCO_API_ADDR": "8080"}},
		"HOLDCO_SITES_ADDR":       {map[string]string{"HOLDCO_SITES_ADDR": "127.0.0.1:99999"}},
		// Tenant sites never share holdco's origin, even when configured so.
		"HOLDCO_SITES_PUBLIC_URL": {map[string]string{"HOLDCO_PUBLIC_URL": "https://api.example", "HOLDCO_SITES_PUBLIC_URL": "https://API.example:443/sites"}},
		"HOLDCO_LOG_LEVEL":        {map[string]string{"HOLDCO_LOG_LEVEL": "loud"}},
		"HOLDCO_LOG_FORMAT":       {map[string]string{"HOLDCO_LOG_FORMAT": "xml"}},
		"HOLDCO_SHUTDOWN_TIMEOUT": {map[string]string{"HOLDCO_SHUTDOWN_TIMEOUT": "-1s"}},
		"TEMPORAL_ADDRESS":        {map[string]string{"TEMPORAL_ADDRESS": "temporal"}},
		// Payments: a key needs its webhook secret; a publishable key is not
		// a secret key; a price without a key is a mistake.
		"STRIPE_WEBHOOK_SECRET":          {map[string]string{"STRIPE_SECRET_KEY": "sk_test_1"}},
		"STRIPE_SECRET_KEY":              {map[string]string{"STRIPE_SECRET_KEY": "pk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1"}},
		"STRIPE_CONNECT_SECRET_KEY":      {map[string]string{"STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1", "STRIPE_CONNECT_SECRET_KEY": "acct_1"}},
		"STRIPE_API_BASE":                {map[string]string{"STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1", "STRIPE_API_BASE": "localhost:12111"}},
		"HOLDCO_CREDIT_PRICE_CENTS":      {map[string]string{"HOLDCO_CREDIT_PRICE_CENTS": "0"}},
		"HOLDCO_FOUNDER_MONTHLY_CREDITS": {map[string]string{"HOLDCO_FOUNDER_MONTHLY_CREDITS": "-5"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(env(tc.env))
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, name, ce.Var)
			assert.NotContains(t, err.Error(), ":p@", "password not echoed")
		})
	}
	_, err := Load(env(map[string]string{"DATABASE_URL": "mysql://u:secret@db/x"}))
	require.ErrorContains(t, err, "DATABASE_URL: unsupported scheme")
	assert.NotContains(t, err.Error(), "secret")
	_, err = Load(env(map[string]string{"DATABASE_URL": "postgres:///nohost"}))
	require.ErrorContains(t, err, "has no host")
}

func TestEverySettingIsDocumentedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings {
		assert.False(t, seen[s.Var], "duplicate %s", s.Var)
		seen[s.Var] = true
		assert.NotEmpty(t, s.Meaning)
	}
}

func TestReadmeDocumentsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for _, s := range Settings {
		assert.Contains(t, string(readme), "| `"+s.Var+"` |", "README lacks %s", s.Var)
	}
}
