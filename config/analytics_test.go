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
