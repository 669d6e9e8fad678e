package testenv

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"holdco/internal/bounds"
	"holdco/workflows"
)

// TimeoutScaleEnv overrides TimeoutScale (a whole number, 1 for the
// production timeouts).
const TimeoutScaleEnv = "HOLDCO_TEST_TIMEOUT_SCALE"

// TimeoutScale is what the activities' heartbeat and start-to-close
// timeouts are multiplied by in tests: generous under -race (which
// slows everything several times, more on a loaded machine), so that no
// activity times out because the machine is busy and is retried, doing
// its work twice.
func TimeoutScale() int {
	if n, err := strconv.Atoi(os.Getenv(TimeoutScaleEnv)); err == nil && n >= 1 {
		return n
	}
	if raceEnabled {
		return 6
	}
	return 3
}

// Main is the TestMain of packages whose tests run workflows (with
// NewTemporal or a whole app): the test settings first (the activities'
// timeouts and the use cases' Temporal bounds, both scaled by
// TimeoutScale), then the tests.
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// Under TEST_DATABASE_URL the tests' Postgres schemas are reused (emptied)
// from one test to the next and dropped after the last (pgpool.go).
//
// The binary's Temporal server (NewTemporal) is not stopped: its state is
// in memory and ends with the process.
func Main(m *testing.M) {
	workflows.ScaleActivityTimeoutsForTests(TimeoutScale())
	bounds.ScaleForTests(TimeoutScale())
	pgPoolsMu.Lock()
	pooling = true
	pgPoolsMu.Unlock()
	code := m.Run()
	if err := dropPooledSchemas(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	exitAfterLogScan(code)
}
