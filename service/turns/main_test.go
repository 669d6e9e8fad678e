package turns_test

import (
	"testing"

	"holdco/service/turns"
	"holdco/testenv"
)

// TestMain applies the test settings (testenv.Main: the activities'
// timeouts scaled for a loaded machine, and the message's start bound
// with them) before the tests.
func TestMain(m *testing.M) {
	turns.ScaleStartTimeoutForTests(testenv.TimeoutScale())
	testenv.Main(m)
}
