// Package tracing sets up OpenTelemetry traces for a holdco process: an
// OTLP/gRPC exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing
// otherwise), server spans on every HTTP listener, and Temporal's
// OpenTelemetry interceptor on the client and its workers, so a request,
// the workflow it starts and each of that workflow's activities are one
// trace. Context travels in W3C trace-context headers (HTTP) and in
// Temporal's headers (workflows, activities).
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Propagator carries trace context across processes: W3C trace-context
// and baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// ServiceName is the service.name of holdco's spans unless
// OTEL_SERVICE_NAME says otherwise.
const ServiceName = "holdco"

// NewOTLPProvider exports spans in batches to the collector at endpoint
// (OTLP over gRPC; an http:// endpoint is reached without TLS). Shutdown
// flushes what is left.
func NewOTLPProvider(ctx context.Context, endpoint string, attrs ...attribute.KeyValue) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(append([]attribute.KeyValue{attribute.String("service.name", ServiceName)}, attrs...)...),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(5*time.Second)), sdktrace.WithResource(res)), nil
}

// HTTP wraps a listener's handler in a server span per request, continuing
// the caller's trace when it sends a traceparent header. The span is named
// after the route once it is known (observability.MeasureHTTP, inside
// this one).
func HTTP(listener string, next http.Handler, tp trace.TracerProvider) http.Handler {
	return otelhttp.NewHandler(next, listener,
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithPropagators(Propagator),
		otelhttp.WithServerName(listener),
	)
}

// TemporalInterceptor is Temporal's OpenTelemetry interceptor on tp: set on
// the client (client.Options.Interceptors), it is used by the workers made
// from that client too. Starting, signalling and updating a workflow, the
// workflow's run and each activity get spans of the caller's trace; the
// SDK's loggers in workflows and activities carry TraceID and SpanID.
func TemporalInterceptor(tp trace.TracerProvider) (interceptor.Interceptor, error) {
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            tp.Tracer("holdco/temporal"),
		TextMapPropagator: Propagator,
	})
}
