package connector_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/connector"
)

func body(t *testing.T, err error) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(connector.ErrorBody(err), &m))
	return m
}

// TestErrorBodyCarriesARetryHintForServiceFailures: upstream_unavailable
// and internal_error (and any error that is not a domain error) say when
// to retry; refusals do not; case fields stay beside error and detail.
func TestErrorBodyCarriesARetryHintForServiceFailures(t *testing.T) {
	up := body(t, models.Errorf(models.CodeUpstreamUnavailable, "Temporal is down."))
	assert.Equal(t, "upstream_unavailable", up["error"])
	assert.EqualValues(t, connector.RetryAfterSeconds, up["retry_after_seconds"])

	internal := body(t, errors.New("disk full"))
	assert.Equal(t, "internal_error", internal["error"])
	assert.NotContains(t, internal["detail"], "disk", "the cause is not shown")
	assert.EqualValues(t, connector.RetryAfterSeconds, internal["retry_after_seconds"])

	limited := body(t, models.Errorf(models.CodeRateLimited, "Slow down.").With("retry_after_seconds", 42))
	assert.EqualValues(t, 42, limited["retry_after_seconds"], "a hint of the case is kept")

	taken := body(t, models.Errorf(models.CodeHandleTaken, "Taken.").With("suggested_handle", "green-2"))
	assert.Equal(t, "green-2", taken["suggested_handle"])
	assert.NotContains(t, taken, "retry_after_seconds")

	field := body(t, models.Errorf(models.CodeInvalidArgument, "Bad.").WithField("business"))
	assert.Equal(t, "business", field["field"])
}
