package turns

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

// A schedule change whose call runs out of the SDK's own deadline, or
// finds the server unavailable, is tried again; any other answer ends it.
func TestScheduleCallsAreRetriedOnlyWhenTheServerWasSlow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails []error
		calls int
		err   bool
	}{
		{"deadline then success", []error{serviceerror.NewDeadlineExceeded("slow"), context.DeadlineExceeded}, 3, false},
		{"unavailable then success", []error{serviceerror.NewUnavailable("restarting")}, 2, false},
		{"not ready then success", []error{serviceerror.NewWorkflowNotReady("workflow task failed")}, 2, false},
		{"not found is an answer", []error{serviceerror.NewNotFound("no schedule")}, 1, true},
		{"invalid is an answer", []error{serviceerror.NewInvalidArgument("bad")}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retryTransient(context.Background(), func(context.Context) error {
				calls++
				if calls <= len(tc.fails) {
					return tc.fails[calls-1]
				}
				return nil
			})
			assert.Equal(t, tc.calls, calls)
			assert.Equal(t, tc.err, err != nil, "%v", err)
		})
	}
}

// A server that stays slow ends the change at scheduleBound with its error.
func TestScheduleCallsStopAtTheirBound(t *testing.T) {
	defer func(b time.Duration) { scheduleBound = b }(scheduleBound)
	scheduleBound = 300 * time.Millisecond
	calls := 0
	err := retryTransient(context.Background(), func(context.Context) error {
		calls++
		return serviceerror.NewDeadlineExceeded("slow")
	})
	var de *serviceerror.DeadlineExceeded
	assert.True(t, errors.As(err, &de), "%v", err)
	assert.GreaterOrEqual(t, calls, 2)
}
