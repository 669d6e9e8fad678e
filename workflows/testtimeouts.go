package workflows

import (
	"sync"
	"time"

	"go.temporal.io/sdk/workflow"
)

var scaleOnce sync.Once

// maxHeartbeatThrottle is MaxHeartbeatThrottle's value.
var maxHeartbeatThrottle = time.Second

// MaxHeartbeatThrottle is the workers' MaxHeartbeatThrottleInterval: a
// running activity's heartbeats reach the server at most this often, so a
// cancellation (an interrupt) reaches the activity within it. It is also
// the deadline of each heartbeat call, and the SDK cancels the activity
// when one fails, so tests scale it with the timeouts: on a loaded machine
// under -race one heartbeat call can take longer than a second.
func MaxHeartbeatThrottle() time.Duration { return maxHeartbeatThrottle }

// ScaleActivityTimeoutsForTests multiplies the heartbeat and
// start-to-close timeouts of holdco's activities by factor, once per
// process. It is for tests only (testenv.Main calls it before any worker
// starts): production timeouts are sized for a production machine, and a
// test on a loaded machine under -race runs many times slower, so an
// activity that a timeout cuts short is retried and does its work twice
// (a model call made twice). Tests that stop a worker mid-activity wait
// for the scaled heartbeat timeout with a bound, never an expectation.
func ScaleActivityTimeoutsForTests(factor int) {
	if factor <= 1 {
		return
	}
	scaleOnce.Do(func() {
		maxHeartbeatThrottle *= time.Duration(factor)
		for _, o := range []*workflow.ActivityOptions{
			&provisionActivity, &diagnoseActivity, &siteConfigActivity, &registrarCall, &reconcileCall,
			&interviewerActivity, &interviewBookkeeping, &modelActivity, &toolActivity, &bookkeeping,
		} {
			o.HeartbeatTimeout *= time.Duration(factor)
			o.StartToCloseTimeout *= time.Duration(factor)
		}
		for _, o := range []*workflow.LocalActivityOptions{&localBookkeeping} {
			o.StartToCloseTimeout *= time.Duration(factor)
		}
	})
}
