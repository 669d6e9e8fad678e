package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestJSONLinesCarryTraceIDs: a line logged with a span's context carries
// its trace and span ids beside the request id; one without a span does
// not.
func TestJSONLinesCarryTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	logger := New(&buf, slog.LevelInfo, "json")
	ctx, span := sdktrace.NewTracerProvider().Tracer("test").Start(WithRequestID(context.Background(), "req-1"), "op")
	logger.InfoContext(ctx, "inside")
	span.End()
	logger.InfoContext(context.Background(), "outside")

	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	var inside, outside map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &inside))
	require.NoError(t, json.Unmarshal(lines[1], &outside))
	assert.Equal(t, span.SpanContext().TraceID().String(), inside["trace_id"])
	assert.Equal(t, span.SpanContext().SpanID().String(), inside["span_id"])
	assert.Equal(t, "req-1", inside["request_id"])
	assert.NotContains(t, outside, "trace_id")
}
