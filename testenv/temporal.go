package testenv

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"holdco/workflows"
	"holdco/workflows/contract"
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
// contract.TaskQueue registered by register. With register nil no worker
// runs (tests that start and stop their own, e.g. Server.NewWorker).
// Everything stops when the test ends.
func NewTemporal(t testing.TB, register func(worker.Registry)) *Temporal {
	t.Helper()
	var ts *temporaltest.TestServer
	if tt, ok := t.(*testing.T); ok {
		ts = temporaltest.NewServer(temporaltest.WithT(tt))
	} else { // a benchmark: quiet, stopped at its end
		ts = temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))}))
		t.Cleanup(ts.Stop)
	}
	c := ts.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := workflows.EnsureSearchAttributes(ctx, c, ts.GetDefaultNamespace()); err != nil {
		t.Fatalf("testenv: register search attributes: %v", err)
	}
	env := &Temporal{Server: ts, Client: c, Namespace: ts.GetDefaultNamespace(), TaskQueue: contract.TaskQueue}
	if register != nil {
		env.Worker = ts.NewWorker(contract.TaskQueue, register)
	}
	return env
}
