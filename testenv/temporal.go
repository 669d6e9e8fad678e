package testenv

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"holdco/workflows"
)

// Temporal is an in-process Temporal test server with holdco's search
// attributes registered and a worker polling holdco's task queue.
type Temporal struct {
	Server    *temporaltest.TestServer
	Client    client.Client
	Namespace string
	TaskQueue string
	Worker    worker.Worker
}

// NewTemporal starts a test server (about a second) and a worker on
// workflows.TaskQueue registered by register (which may be nil). Everything
// stops when the test ends.
func NewTemporal(t *testing.T, register func(worker.Registry)) *Temporal {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := workflows.EnsureSearchAttributes(ctx, c, ts.GetDefaultNamespace()); err != nil {
		t.Fatalf("testenv: register search attributes: %v", err)
	}
	if register == nil {
		register = func(worker.Registry) {}
	}
	w := ts.NewWorker(workflows.TaskQueue, register)
	return &Temporal{Server: ts, Client: c, Namespace: ts.GetDefaultNamespace(), TaskQueue: workflows.TaskQueue, Worker: w}
}
