package app

import (
	"context"

	"holdco/service/analytics"
)

// startAnalyticsWriter runs the capture queue's writer on the api role
// (the role that serves capture). stopAnalytics, called after the
// listeners stopped, refuses new events and stores every queued one
// before the store closes.
func (a *App) startAnalyticsWriter(svc *analytics.Service) {
	if a.stopAnalytics != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunWriter(ctx)
	}()
	a.stopAnalytics = func(shutdown context.Context) {
		cancel()
		<-done // RunWriter returns after the batch it is writing
		svc.StopWriter(shutdown)
	}
}

func (a *App) analyticsOptions() analytics.Options {
	return analytics.Options{QueueEvents: a.cfg.Analytics.QueueEvents}
}
