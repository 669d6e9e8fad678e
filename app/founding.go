package app

import (
	"context"

	"holdco/service/founding"
)

// startFoundingSweeper starts the workflows of founding interviews whose
// start a crash lost (worker role); the returned function stops it.
func (a *App) startFoundingSweeper() func(context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sw := &founding.Sweeper{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "founding-sweeper")}
	go func() {
		defer close(done)
		sw.Run(ctx, founding.SweepEvery)
	}()
	return func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}
}
