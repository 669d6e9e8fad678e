package app

import (
	"context"

	"holdco/observability"
	"holdco/service/analytics"
	"holdco/service/background"
)

// startAnalyticsWriter arranges capture's life on the api role (the role
// that serves it). Capture commits its own events to the inbox (group
// commit: each request answers after the commit of the batch holding its
// events) and folds them into the reports' tables (service/analytics,
// fold.go); the folder starts now for what an earlier run left in the
// inbox, and a sweep folds, once per cluster, what a stopped replica left.
// The raw-event retention sweep runs when a retention is set (once per
// cluster: service/background).
// stopAnalytics, called after the listeners stopped, ends the sweep, refuses new events and waits for a commit
// still under way before the store closes.
func (a *App) startAnalyticsWriter(svc *analytics.Service) {
	if a.stopAnalytics != nil {
		return
	}
	removeSource := observability.CaptureSource(func() observability.CaptureCounts {
		st := svc.Stats()
		return observability.CaptureCounts{Stored: st.Stored, UnknownKey: st.UnknownKey, Malformed: st.Malformed, QueueFull: st.QueueFull,
			WriteFailed: st.WriteFailed, RateLimited: st.RateLimited, Queued: st.Queued,
			Unfolded: st.Unfolded, Commits: st.Commits, CommitSeconds: st.CommitTime.Seconds()}
	})
	svc.StartFolder()
	stopFold := a.sweepRunner().Start(background.Sweep{Name: "analytics_fold", Every: analytics.FoldSweepEvery,
		Done: "analytics: events left in the inbox folded",
		Pass: svc.FoldLeftovers})
	stopRetention := func(context.Context) {}
	if days := a.cfg.Analytics.RawRetentionDays; days > 0 {
		stopRetention = a.sweepRunner().Start(background.Sweep{Name: "analytics_retention", Every: analytics.RetentionEvery,
			Done: "analytics: raw events past retention deleted",
			Pass: func(ctx context.Context) (int64, error) { return svc.PurgeRawEvents(ctx, days) }})
	}
	a.stopAnalytics = func(shutdown context.Context) {
		stopRetention(shutdown)
		stopFold(shutdown)
		svc.StopWriter(shutdown)
		removeSource()
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
