package observability

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

var httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "holdco_http_request_duration_seconds",
	Help:    "Duration of HTTP requests, by listener (api, mcp, oauth, sites), method, route template and status class (2xx, 3xx, 4xx, 5xx).",
	Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
}, []string{"listener", "method", "route", "status_class"})

var (
	frontRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdco_http_front_requests_total",
		Help: "Requests a listener's lean HTTP/1.1 front answered itself (analytics capture on the api listener, internal/httpfront); they are in holdco_http_request_duration_seconds too.",
	}, []string{"listener"})
	frontHandoffs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdco_http_front_handoffs_total",
		Help: "Connections a listener's front handed to net/http at their first request it does not serve.",
	}, []string{"listener"})
)

// FrontCounters are the counting functions of a listener's front
// (httpfront.Server's OnServe and OnHandOff).
func FrontCounters(listener string) (served, handedOff func()) {
	s, h := frontRequests.WithLabelValues(listener), frontHandoffs.WithLabelValues(listener)
	return s.Inc, h.Inc
}

// RouteUnmatched is the route label of a request no route answered.
const RouteUnmatched = "unmatched"

// SetRoute records the route template that answers the request (such as
// "/companies/{company_id}"), for the listener's metrics and the request's
// span name. Routers call it with the response writer they were handed
// (or one wrapping it, with Unwrap) once the route is known; without it
// the ServeMux pattern is used, else the listener's fallback. The route
// travels in the writer, not the request's context: no copy of the
// request is made for it.
func SetRoute(w http.ResponseWriter, template string) {
	if template == "" {
		return
	}
	for range 8 { // a few wrappers at most; never loop on a writer that unwraps to itself
		switch v := w.(type) {
		case *statusWriter:
			v.route = template
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return
		}
	}
}

// HTTPOptions tunes MeasureHTTP.
type HTTPOptions struct {
	// Route names the route of a request that recorded none (a handler
	// without a router); nil: RouteUnmatched.
	Route func(*http.Request) string
}

// MeasureHTTP wraps a listener's handler: every request's duration is
// observed by route template and status class, a 429 counts as a
// rate-limit refusal of the listener, and the request's span (the
// tracing middleware outside this one) is named after the route.
func MeasureHTTP(listener string, next http.Handler, o HTTPOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		sw := &statusWriter{ResponseWriter: w} // one allocation for the writer and the route
		defer func() {
			route := sw.route
			if route == "" {
				route = r.Pattern
			}
			if route == "" && o.Route != nil {
				route = o.Route(r)
			}
			if route == "" {
				route = RouteUnmatched
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			httpDuration.WithLabelValues(listener, method(r.Method), route, statusClass(status)).Observe(time.Since(began).Seconds())
			if status == http.StatusTooManyRequests {
				RateLimited(listener)
			}
			if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
				span.SetName(r.Method + " " + route)
				span.SetAttributes(attribute.String("http.route", route))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// method keeps the label's values bounded: unknown methods are "other".
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// statusClass is the label of a status: 2xx, 4xx, …
func statusClass(status int) string {
	switch status / 100 {
	case 1:
		return "1xx"
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	case 5:
		return "5xx"
	}
	return strconv.Itoa(status/100) + "xx"
}

// statusWriter remembers the status written (and holds the route the
// router recorded, SetRoute); it passes Flush (streamed
// answers), Hijack and Unwrap (http.ResponseController) through.
type statusWriter struct {
	http.ResponseWriter
	status int
	route  string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("observability: the response writer cannot be hijacked")
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
