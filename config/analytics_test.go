package config

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnalyticsSettings(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.Empty(t, c.Analytics.TrustedProxies, "no proxy is trusted by default")
	assert.Equal(t, 100_000, c.Analytics.QueueEvents)

	c, err = Load(env(map[string]string{"HOLDCO_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7 ,2001:db8::/32, ::ffff:198.51.100.1", "HOLDCO_ANALYTICS_QUEUE_EVENTS": "5000"}))
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("198.51.100.1/32")}, c.Analytics.TrustedProxies)
	assert.Equal(t, 5000, c.Analytics.QueueEvents)
}

func TestAnalyticsLimitsAndRetention(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 100, c.Analytics.AddressRate)
	assert.Equal(t, 1000, c.Analytics.KeyRate)
	assert.Equal(t, 90, c.Analytics.RawRetentionDays)

	c, err = Load(env(map[string]string{"HOLDCO_ANALYTICS_ADDRESS_RATE": "0", "HOLDCO_ANALYTICS_KEY_RATE": "50", "HOLDCO_ANALYTICS_RAW_RETENTION": "0"}))
	require.NoError(t, err)
	assert.Zero(t, c.Analytics.AddressRate, "0 turns the limit off")
	assert.Equal(t, 50, c.Analytics.KeyRate)
	assert.Zero(t, c.Analytics.RawRetentionDays, "0 keeps raw events")

	c, err = Load(env(map[string]string{"HOLDCO_ANALYTICS_RAW_RETENTION": "30"}))
	require.NoError(t, err)
	assert.Equal(t, 30, c.Analytics.RawRetentionDays)
	for _, bad := range []string{"7d", "1", "-1d", "a week", "2w"} {
		_, err = Load(env(map[string]string{"HOLDCO_ANALYTICS_RAW_RETENTION": bad}))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "HOLDCO_ANALYTICS_RAW_RETENTION", bad)
	}
	_, err = Load(env(map[string]string{"HOLDCO_ANALYTICS_KEY_RATE": "-5"}))
	require.Error(t, err)
}
