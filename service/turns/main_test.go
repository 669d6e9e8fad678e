package turns_test

import (
	"testing"

	"holdco/service/turns"
	"holdco/testenv"
)

// TestMain applies the test settings (testenv.Main: the activities'
// timeouts scaled for a loaded machine, and the message's and
// schedules' bounds with them) before the tests.
func TestMain(m *testing.M) {
	turns.ScaleTimeoutsForTests(testenv.TimeoutScale())
	testenv.Main(m)
}
