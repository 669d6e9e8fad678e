package app

import (
	"context"
	"holdco/service/companies"
)

// startProvisioningSweeper runs the provisioning outbox's sweeper on the
// worker role: it starts provisioning of companies whose creation was
// committed but whose workflow never started (a crash or an unreachable
// Temporal between the two). It stops before the worker does.
func (a *App) startProvisioningSweeper(stopBlobs func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	outbox := &companies.ProvisioningOutbox{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "provisioning-sweeper")}
	go func() {
		defer close(done)
		outbox.RunSweeper(ctx, companies.SweepInterval)
	}()
	a.stopSweeper = func(shutdown context.Context) {
		cancel()
		select { // a sweep's starts end with ctx; the shutdown deadline bounds the rest
		case <-done:
		case <-shutdown.Done():
		}
		stopBlobs(shutdown)
	}
}
