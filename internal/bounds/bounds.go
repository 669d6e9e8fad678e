// Package bounds holds the one factor by which tests scale the bounds
// holdco's use cases put on their calls to Temporal: a workflow start, a
// signal, an update, a schedule change, a wait for a workflow to close.
//
// Production leaves the factor at 1. Tests set it once, before any test
// runs (testenv.Main): under -race on a loaded machine one Temporal call
// can take longer than its production bound, and the use case then answers
// upstream_unavailable (or conflict) where the test expects the call's
// effect. The activities' own timeouts are scaled the same way by
// workflows.ScaleActivityTimeoutsForTests.
package bounds

import (
	"sync/atomic"
	"time"
)

var factor atomic.Int64

func init() { factor.Store(1) }

// ScaleForTests sets the factor; values below 1 are ignored. For tests
// only (testenv.Main).
func ScaleForTests(f int) {
	if f >= 1 {
		factor.Store(int64(f))
	}
}

// Of is the bound d as this process uses it: d itself in production,
// d times the tests' factor in tests.
func Of(d time.Duration) time.Duration { return d * time.Duration(factor.Load()) }
