// Package analytics is a company's web analytics: the public key and the
// loader script, the capture of PostHog-protocol events through a bounded
// queue and a background writer (writer.go), and the reports (summary with
// trend, countries, the dashboard's headline) read from rollups. See
// docs/analytics.md.
package analytics

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Service is the analytics use cases.
type Service struct {
	core   *service.Core
	store  *store.Store
	logger *slog.Logger
	now    func() time.Time
	// keys caches key → company id ("" for an unknown key) so capture
	// reads the database once a minute per key, not per event.
	keys *service.Cache[string, string]
	// handleKeys caches handle → key ("" for an unknown handle).
	handleKeys *service.Cache[string, string]
	queue      *Queue
	counter    Counters
	// byAddress and byKey are capture's flood guard (limit.go), counted
	// once for the cluster; nil: off.
	byAddress, byKey *limiter
	// refuseUntil (unix ns) is when capture tries the database again
	// after a failed commit; failing is when the current run of failed
	// commits began (zero: none), under failMu.
	refuseUntil   atomic.Int64
	failMu        sync.Mutex
	failing       time.Time
	failedBatches int
	// foldFailing is when the current run of failed folds began (zero:
	// none), under failMu.
	foldFailing time.Time
	groupWait   time.Duration
	// fold is the inbox's folder (fold.go) and foldEvents, foldDelay and
	// maxUnfolded its options.
	fold          *folder
	foldEvents    int
	foldDelay     time.Duration
	foldDeferRate int
	foldMaxLag    time.Duration
	maxUnfolded   int
	// beforeWrite runs before each commit (tests hold the writer there).
	beforeWrite func()
}

// Options size the capture queue and its limits (zero values: the
// defaults).
type Options struct {
	// QueueEvents is how many events may wait for the writer; beyond it
	// capture answers 503.
	QueueEvents int
	// FlushEvents is the most events one commit holds.
	FlushEvents int
	// GroupWait is the most a batch waits, after a commit, for the
	// requests that commit answered to come back (group commit,
	// writer.go); negative: no wait.
	GroupWait time.Duration
	// FoldEvents is the most events one fold transaction takes from the
	// inbox; FoldDelay how long the folder gathers acknowledged events
	// before folding them; FoldDeferRate the rate of acknowledged events
	// (per second) at which it defers, for at most FoldMaxLag since its
	// last fold (fold.go); MaxUnfolded how many this process may have
	// acknowledged and not folded before capture answers 503.
	FoldEvents    int
	FoldDelay     time.Duration
	FoldDeferRate int
	FoldMaxLag    time.Duration
	MaxUnfolded   int
	// AddressRate and KeyRate are the events per second one client
	// address and one public key may send (bursts of 10 s), counted once
	// for the processes sharing the database; negative: no limit.
	AddressRate, KeyRate int
}

// Defaults of Options.
const (
	DefaultQueueEvents = 100_000
	// DefaultFlushEvents keeps one commit short (tens of milliseconds on
	// SQLite), so request writes queued behind it wait little.
	DefaultFlushEvents = 1_000
	DefaultGroupWait   = 5 * time.Millisecond
	keyCacheTTL        = time.Minute
	keyCacheMax        = 100_000
)

// New builds the analytics use cases on core. The writer that drains the
// capture queue is started by the process serving capture (Writer).
func New(core *service.Core, opts Options) *Service {
	if opts.QueueEvents <= 0 {
		opts.QueueEvents = DefaultQueueEvents
	}
	if opts.FlushEvents <= 0 {
		opts.FlushEvents = DefaultFlushEvents
	}
	if opts.GroupWait == 0 {
		opts.GroupWait = DefaultGroupWait
	}
	if opts.FoldEvents <= 0 {
		opts.FoldEvents = DefaultFoldEvents
	}
	if opts.FoldDelay <= 0 {
		opts.FoldDelay = DefaultFoldDelay
	}
	if opts.FoldDeferRate <= 0 {
		opts.FoldDeferRate = DefaultFoldDeferRate
	}
	if opts.FoldMaxLag <= 0 {
		opts.FoldMaxLag = DefaultFoldMaxLag
	}
	if opts.MaxUnfolded <= 0 {
		opts.MaxUnfolded = DefaultMaxUnfolded
	}
	if opts.AddressRate == 0 {
		opts.AddressRate = DefaultAddressRate
	}
	if opts.KeyRate == 0 {
		opts.KeyRate = DefaultKeyRate
	}
	s := &Service{core: core, store: core.Store(), logger: core.Logger().With("component", "analytics"), now: core.Clock(),
		keys: service.NewCache[string, string](keyCacheTTL, keyCacheMax, core.Clock()), handleKeys: service.NewCache[string, string](keyCacheTTL, keyCacheMax, core.Clock())}
	s.queue = newQueue(opts)
	s.byAddress = sharedLimiter(opts.AddressRate, s.store, "analytics/address", s.logger)
	s.byKey = sharedLimiter(opts.KeyRate, s.store, "analytics/key", s.logger)
	s.groupWait = opts.GroupWait
	s.fold, s.foldEvents, s.foldDelay, s.maxUnfolded = newFolder(), opts.FoldEvents, opts.FoldDelay, opts.MaxUnfolded
	s.foldDeferRate, s.foldMaxLag = opts.FoldDeferRate, opts.FoldMaxLag
	return s
}

// Range is a report's period: the last N UTC days, today included
// (1d is today so far), compared with the N days before.
type Range struct {
	Name string
	Days int
}

// Ranges are the allowed report ranges.
var Ranges = []Range{{"1d", 1}, {"7d", 7}, {"30d", 30}, {"90d", 90}}

// DefaultRange is the range of a report that names none.
const DefaultRange = "30d"

// ParseRange reads a range name; "" is the default, anything but 1d, 7d,
// 30d and 90d is bad_request (400) on range.
func ParseRange(name string) (Range, error) {
	if name == "" {
		name = DefaultRange
	}
	for _, r := range Ranges {
		if r.Name == name {
			return r, nil
		}
	}
	return Range{}, models.Errorf(models.CodeBadRequest, "range must be one of 1d, 7d, 30d or 90d.").WithField("range")
}

// period is a range's days as of today: [From, To] and the period before,
// [PrevFrom, From-1].
type period struct {
	From, To, PrevFrom, PrevTo time.Time
}

func (r Range) period(now time.Time) period {
	today := now.UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -(r.Days - 1))
	return period{From: from, To: today, PrevFrom: from.AddDate(0, 0, -r.Days), PrevTo: from.AddDate(0, 0, -1)}
}

// Key returns the company's public analytics key (the loader's `c`).
func (s *Service) Key(ctx context.Context, companyID string) (string, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return "", err
	}
	return s.store.Analytics().AnalyticsKey(ctx, ac.Scope)
}
