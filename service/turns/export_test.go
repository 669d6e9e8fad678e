package turns

import "time"

// ScaleStartTimeoutForTests multiplies the bound of a message's workflow
// start, and of a schedule change, by factor, for this package's tests (TestMain): under -race on a
// loaded machine a start RPC can take longer than the production bound,
// and a message then answers upstream_unavailable where the test expects
// the running turn's conflict.
func ScaleStartTimeoutForTests(factor int) {
	if factor > 1 {
		startTimeout *= time.Duration(factor)
		scheduleBound *= time.Duration(factor)
	}
}
