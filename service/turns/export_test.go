package turns

import "time"

// ScaleTimeoutsForTests multiplies the bounds of a message's workflow
// start, of a schedule change, of the wait for an ended turn's workflow to
// close and of an interrupt's wait by factor, for this package's tests
// (TestMain): under -race on a loaded machine a Temporal call can take
// longer than the production bound, and a message then answers
// upstream_unavailable (or, when the ended turn's workflow closes late,
// conflict) where the test expects a turn.
func ScaleTimeoutsForTests(factor int) {
	if factor > 1 {
		startTimeout *= time.Duration(factor)
		scheduleBound *= time.Duration(factor)
		closeWait *= time.Duration(factor)
		interruptWait *= time.Duration(factor)
	}
}
