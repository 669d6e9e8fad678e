package llm

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"holdco/models"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := func(k, v string) http.Header { return http.Header{http.CanonicalHeaderKey(k): {v}} }
	assert.Equal(t, 7*time.Second, RetryAfter(h("retry-after", "7"), now))
	assert.Equal(t, 250*time.Millisecond, RetryAfter(h("retry-after-ms", "250"), now))
	assert.Equal(t, 30*time.Second, RetryAfter(h("retry-after", now.Add(30*time.Second).Format(http.TimeFormat)), now))
	assert.Zero(t, RetryAfter(h("retry-after", "soon"), now))
	assert.Zero(t, RetryAfter(nil, now))
}

func TestStatusErrorScrubsTheKeyAndBoundsTheDetail(t *testing.T) {
	e := StatusError(400, nil, "invalid_request_error", "bad key sk-123 "+string(make([]byte, 1000)), "sk-123")
	assert.Equal(t, models.ModelInvalidRequest, e.Kind)
	assert.NotContains(t, e.Detail, "sk-123")
	assert.LessOrEqual(t, len(e.Detail), maxDetail+len("invalid_request_error: ")+len("…"))
}
