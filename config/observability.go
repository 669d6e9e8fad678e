package config

// Observability is how a process is watched: its Prometheus metrics
// listener and the OpenTelemetry trace exporter.
type Observability struct {
	// MetricsAddr is the metrics listener (GET /metrics), apart from every
	// public listener; empty: no metrics listener.
	MetricsAddr string
	// PprofAddr is the profiling listener (net/http/pprof under
	// /debug/pprof/), apart from every public listener; empty: none.
	PprofAddr string
	// OTLPEndpoint is the OpenTelemetry collector traces are exported to
	// (OTLP over gRPC); empty: no traces are exported.
	OTLPEndpoint string
}

func loadObservability(e environment) (Observability, error) {
	o := Observability{OTLPEndpoint: e.get("OTEL_EXPORTER_OTLP_ENDPOINT")}
	if e.get("HOLDCO_METRICS_ADDR") != "" {
		addr, err := e.addr("HOLDCO_METRICS_ADDR")
		if err != nil {
			return o, err
		}
		o.MetricsAddr = addr
	}
	if e.get("HOLDCO_PPROF_ADDR") != "" {
		addr, err := e.addr("HOLDCO_PPROF_ADDR")
		if err != nil {
			return o, err
		}
		o.PprofAddr = addr
	}
	if o.OTLPEndpoint != "" {
		if _, err := e.url("OTEL_EXPORTER_OTLP_ENDPOINT"); err != nil {
			return o, err
		}
	}
	return o, nil
}
