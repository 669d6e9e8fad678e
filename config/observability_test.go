package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObservabilityIsOffByDefault: no metrics listener and no trace export
// unless configured.
func TestObservabilityIsOffByDefault(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, Observability{}, c.Observability)

	c, err = Load(env(map[string]string{"HOLDCO_METRICS_ADDR": ":9464", "HOLDCO_PPROF_ADDR": "127.0.0.1:6060", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}))
	require.NoError(t, err)
	assert.Equal(t, Observability{MetricsAddr: ":9464", PprofAddr: "127.0.0.1:6060", OTLPEndpoint: "http://collector:4317"}, c.Observability)

}
