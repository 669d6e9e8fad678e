package oauth

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCacheLifetime(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"":                            MetadataMaxCache,
		"max-age=60":                  time.Minute,
		"public, max-age=3600":        time.Hour,
		"max-age=999999":              MetadataMaxCache,
		"no-store":                    0,
		"no-cache, max-age=60":        0,
		"max-age=bogus":               0,
		`max-age="120"`:               2 * time.Minute,
		"Max-Age=30, must-revalidate": 30 * time.Second,
	} {
		assert.Equal(t, want, cacheLifetime(cc), cc)
	}
}

func TestCheckMetadataURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://app.example/client.json": true,
		"https://app.example:8443/a/b":    true,
		"http://app.example/client.json":  false,
		"https://app.example":             false,
		"https://app.example/":            false,
		"https://app.example/c?x=1":       false,
		"https://app.example/c?":          false,
		"https://app.example/c#f":         false,
		"https://user@app.example/c":      false,
		"https://app.example/a/../c":      false,
		"https://app.example/a/./c":       false,
	} {
		assert.Equal(t, ok, checkMetadataURL(raw) == nil, raw)
	}
}

func TestMatchRedirect(t *testing.T) {
	native := Client{ApplicationType: AppNative, RedirectURIs: []string{"http://127.0.0.1/cb", "http://localhost:3000/cb", "https://a.example/cb"}}
	web := Client{ApplicationType: AppWeb, RedirectURIs: []string{"https://a.example/cb"}}
	for _, c := range []struct {
		client Client
		uri    string
		ok     bool
	}{
		{native, "http://127.0.0.1/cb", true},
		{native, "http://127.0.0.1:49152/cb", true},
		{native, "http://localhost:1/cb", true},
		{native, "http://localhost:3000/cb?x", false},
		{native, "http://127.0.0.1:5/other", false},
		{native, "http://[::1]:5/cb", false},
		{native, "https://a.example:444/cb", false},
		{native, "https://a.example/cb", true},
		{web, "https://a.example/cb", true},
		{web, "https://a.example/cb/", false},
		{web, "https://A.example/cb", false},
	} {
		_, ok := c.client.matchRedirect(c.uri)
		assert.Equal(t, c.ok, ok, c.uri)
	}
}
