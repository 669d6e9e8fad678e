//go:build faults

package turns_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// brokenModel fails every call with err.
type brokenModel struct {
	calls atomic.Int64
	err   *models.ModelCallError
}

func (m *brokenModel) Complete(context.Context, models.ModelRequest, func(string)) (models.ModelResponse, error) {
	m.calls.Add(1)
	e := *m.err
	return models.ModelResponse{}, &e
}

// TestFaultModelProviderFailing (docs/reliability.md, "Model provider
// failing"): a provider that refuses every call (bad key, a request it
// rejects, a context it cannot take) ends the turn failed with the
// reason, and nothing is charged for calls that produced nothing. The
// provider adapters' own tests cover what their errors are made of (429,
// 5xx, timeouts, cut and malformed streams: providers/llm/*), and
// TestRateLimitedModelCallIsRetriedAndChargedOnce the retry of a 429.
func TestFaultModelProviderFailing(t *testing.T) {
	for _, kind := range []models.ModelErrorKind{models.ModelAuth, models.ModelInvalidRequest, models.ModelContextTooLong} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			m := &brokenModel{err: &models.ModelCallError{Kind: kind, Status: 400, Detail: "refused by the fault test"}}
			w := newWorld(t, m, 100)
			st := w.send(t, "Hello")
			v := w.wait(t, st.TurnID, ended)
			require.Equal(t, models.TurnFailed, v.Status)
			assert.NotEmpty(t, v.ErrorCode, "the turn says why")
			assert.NotEmpty(t, v.ErrorDetail)
			assert.Equal(t, int64(100), w.balance(t), "nothing charged")
			assert.GreaterOrEqual(t, m.calls.Load(), int64(1))
		})
	}
}
