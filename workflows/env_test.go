package workflows_test

import (
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// newTestEnv is the SDK's workflow test environment with a deadlock
// detector that tolerates a loaded machine: under -race on two busy cores a
// workflow task can be descheduled for over the default second, which the
// SDK would report as a deadlock although the workflow code never blocks.
func newTestEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	return env
}
