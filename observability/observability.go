// Package observability holds what an operator watches a holdco process
// with: one Prometheus registry per process (Registry) served on the
// metrics listener (HOLDCO_METRICS_ADDR), the domain's numbers (turns,
// model and tool calls, credits, capture, provisioning, sweeps, refusals,
// connector calls), the HTTP middleware every listener is wrapped in and
// the adapter of Temporal's SDK metrics. Tracing is in
// observability/tracing.
//
// The domain's numbers are counted where their rule lives, once, through
// the small functions below (TurnEnded, CreditsSpent, …); every label has
// a bounded set of values (states, error cases, tool names of the
// catalog), never an id.
package observability

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric of the process: the Go runtime's and the
// process's, the domain's, the HTTP listeners' and Temporal's SDK's.
var Registry = prometheus.NewRegistry()

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		httpDuration,
		frontRequests,
		frontHandoffs,
		temporalSDK,
	)
	Registry.MustRegister(domainCollectors...)
}

// Handler serves the registry in the Prometheus text format (GET /metrics).
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

// MetricsHandler is the metrics listener's handler: /metrics, and a 404
// elsewhere.
func MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler())
	return mux
}
