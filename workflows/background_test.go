package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"holdco/store"
	"holdco/workflows"
)

func writesAsBackground(ctx context.Context) (bool, error) { return store.IsBackground(ctx), nil }

// Activities run by a worker with holdco's interceptors write as
// background work (the store's write gate lets requests' writes go
// first); without them they write as requests do.
func TestActivitiesWriteAsBackground(t *testing.T) {
	for _, c := range []struct {
		name string
		opts worker.Options
		want bool
	}{
		{"with holdco's interceptors", worker.Options{Interceptors: workflows.WorkerInterceptors()}, true},
		{"without", worker.Options{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
			env.SetWorkerOptions(c.opts)
			env.RegisterActivity(writesAsBackground)
			v, err := env.ExecuteActivity(writesAsBackground)
			require.NoError(t, err)
			var got bool
			require.NoError(t, v.Get(&got))
			assert.Equal(t, c.want, got)
		})
	}
}
