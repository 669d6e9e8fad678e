package app

import (
	"context"

	"holdco/service/analytics"
)

// startAnalyticsWriter arranges capture's life on the api role (the role
// that serves it). Capture commits its own events (group commit: each
// request answers after the commit of the batch holding its events), so
// no writer runs in the background; the raw-event retention sweep does,
// when a retention is set. stopAnalytics, called after the listeners
// stopped, ends the sweep, refuses new events and waits for a commit
// still under way before the store closes.
func (a *App) startAnalyticsWriter(svc *analytics.Service) {
	if a.stopAnalytics != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if days := a.cfg.Analytics.RawRetentionDays; days > 0 {
			svc.RunRetention(ctx, days, analytics.RetentionEvery)
		}
	}()
	a.stopAnalytics = func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
		svc.StopWriter(shutdown)
	}
}

func (a *App) analyticsOptions() analytics.Options {
	c := a.cfg.Analytics
	return analytics.Options{QueueEvents: c.QueueEvents, AddressRate: rateOption(c.AddressRate), KeyRate: rateOption(c.KeyRate)}
}

// rateOption maps a configured rate (0: off) to analytics.Options' (0:
// the default, negative: off).
func rateOption(perSecond int) int {
	if perSecond == 0 {
		return -1
	}
	return perSecond
}
