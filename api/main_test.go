package api_test

import (
	"testing"

	"holdco/testenv"
)

// TestMain applies the test settings (testenv.Main: the activities'
// timeouts and the use cases' Temporal bounds scaled for a loaded
// machine) before the tests.
func TestMain(m *testing.M) { testenv.Main(m) }
