package observability

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"holdco/models"
)

// Outcomes of a call in the counters' outcome labels.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

var (
	turnsEnded = counter("holdco_turns_ended_total",
		"Agent turns that ended, by end state (completed, waiting, failed, interrupted).", "state")
	modelCalls = counter("holdco_model_calls_total",
		"Calls of the language model (agent turns and founding interviews), by provider and outcome (ok, error).", "provider", "outcome")
	modelCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "holdco_model_call_duration_seconds",
		Help:    "Duration of language model calls, stream included, by provider.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}}, []string{"provider"})
	toolCalls = counter("holdco_agent_tool_calls_total",
		"Tool calls made by the agents' turns, by tool and outcome (ok, error: a refusal the model sees).", "tool", "outcome")
	creditsSpent = counter("holdco_credits_spent_total",
		"Credits charged to accounts, by ledger entry type.", "type")
	creditsGranted = counter("holdco_credits_granted_total",
		"Credits granted to accounts (top-ups, plans, welcome, refunds, positive adjustments), by ledger entry type.", "type")
	provisioning = counter("holdco_provisioning_outcomes_total",
		"Outcomes of provisioning a company's resource, by resource kind and outcome (ready, failed).", "kind", "outcome")
	heals = counter("holdco_heals_total",
		"Operator heal requests, by outcome: requested (something was re-provisioned) or healthy (nothing to do).", "outcome")
	sweepRuns = counter("holdco_sweep_runs_total",
		"Passes of the background sweeps, by sweep and outcome (ok, error).", "sweep", "outcome")
	sweepLeases = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "holdco_sweep_lease_held",
		Help: "1 while this process holds the lease of a background sweep (runs it for the cluster), else 0; by sweep."}, []string{"sweep"})
	rateLimited = counter("holdco_rate_limit_refusals_total",
		"Requests and calls refused as rate_limited, by surface: a listener (api, mcp, oauth, sites) answering 429, connector_tool or agent_tool.", "surface")
	connectorCalls = counter("holdco_connector_tool_calls_total",
		"Tool calls on the assistant connector (MCP), by tool and outcome (ok or the error case).", "tool", "outcome")
)

var domainCollectors = []prometheus.Collector{turnsEnded, modelCalls, modelCallDuration, toolCalls, creditsSpent, creditsGranted,
	capture, provisioning, heals, sweepRuns, sweepLeases, rateLimited, connectorCalls}

// TurnEnded counts a turn's end, once, in the state written.
func TurnEnded(state string) { turnsEnded.WithLabelValues(state).Inc() }

// ModelCalled counts one language model call and its duration.
func ModelCalled(provider string, err error, took time.Duration) {
	modelCalls.WithLabelValues(provider, outcome(err)).Inc()
	modelCallDuration.WithLabelValues(provider).Observe(took.Seconds())
}

// AgentToolCalled counts one tool call of an agent's turn. tool must be a
// name of the catalog (an unknown name is counted as "unknown"); refusal
// is the tool's refusal the model sees (nil: it answered). A rate_limited
// refusal counts as one of the agent_tool surface too.
func AgentToolCalled(tool string, known bool, refusal error) {
	if !known {
		tool = "unknown"
	}
	toolCalls.WithLabelValues(tool, outcome(refusal)).Inc()
	if models.IsCode(refusal, models.CodeRateLimited) {
		RateLimited(SurfaceAgentTool)
	}
}

// CreditsSpent counts credits charged with a ledger entry of entryType.
func CreditsSpent(entryType string, credits int64) {
	if credits > 0 {
		creditsSpent.WithLabelValues(entryType).Add(float64(credits))
	}
}

// CreditsGranted counts credits granted with a ledger entry of entryType
// (negative adjustments are not grants).
func CreditsGranted(entryType string, credits int64) {
	if credits > 0 {
		creditsGranted.WithLabelValues(entryType).Add(float64(credits))
	}
}

// CaptureCounts are analytics capture's counters since its start (each
// api role's capture service keeps them) and its queue's length.
type CaptureCounts struct {
	// Stored events were committed: accepted.
	Stored int64
	// Dropped events, by why: a key no company has, a malformed event, a
	// full queue (503), a failed write (503), a rate limit (429).
	UnknownKey, Malformed, QueueFull, WriteFailed, RateLimited int64
	Queued                                                     int
	// Unfolded events are stored in the inbox and not yet folded into
	// the reports' tables.
	Unfolded int64
	// Commits is how many transactions committed the stored events (group
	// commit: one holds the events of many requests), CommitSeconds the
	// time they took in all, the sync included.
	Commits       int64
	CommitSeconds float64
}

func (c CaptureCounts) add(o CaptureCounts) CaptureCounts {
	return CaptureCounts{Stored: c.Stored + o.Stored, UnknownKey: c.UnknownKey + o.UnknownKey, Malformed: c.Malformed + o.Malformed,
		QueueFull: c.QueueFull + o.QueueFull, WriteFailed: c.WriteFailed + o.WriteFailed, RateLimited: c.RateLimited + o.RateLimited,
		Queued: c.Queued + o.Queued, Unfolded: c.Unfolded + o.Unfolded, Commits: c.Commits + o.Commits, CommitSeconds: c.CommitSeconds + o.CommitSeconds}
}

// captureCollector reads the capture services' own counters when scraped,
// so capture needs no second count of its events.
type captureCollector struct {
	mu       sync.Mutex
	sources  map[*func() CaptureCounts]bool
	retired  CaptureCounts // counts of removed sources: the counters never go back
	events   *prometheus.Desc
	queue    *prometheus.Desc
	unfolded *prometheus.Desc
	commits  *prometheus.Desc
	commitS  *prometheus.Desc
}

var capture = &captureCollector{sources: map[*func() CaptureCounts]bool{},
	events: prometheus.NewDesc("holdco_analytics_capture_events_total",
		"Analytics events received by capture, by outcome: accepted (committed) or dropped: unknown_key, malformed, queue_full, write_failed, rate_limited.",
		[]string{"outcome"}, nil),
	queue: prometheus.NewDesc("holdco_analytics_capture_queue_events", "Captured analytics events waiting for the writer's commit.", nil, nil),
	unfolded: prometheus.NewDesc("holdco_analytics_capture_unfolded_events",
		"Captured analytics events stored in the inbox and not yet folded into the reports (at most; capture answers 503 past 1,000,000).", nil, nil),
	commits: prometheus.NewDesc("holdco_analytics_capture_commits_total",
		"Transactions that committed captured events to the inbox; each holds the events of every request waiting for it (accepted events / commits is the mean batch).", nil, nil),
	commitS: prometheus.NewDesc("holdco_analytics_capture_commit_seconds_total",
		"Time the capture commits took, the sync included (/ commits_total: the mean commit each capture request waits for before its 200).", nil, nil)}

// CaptureSource adds a capture service's counters (an api role's); remove
// takes it away at shutdown, keeping what it counted.
func CaptureSource(counts func() CaptureCounts) (remove func()) {
	capture.mu.Lock()
	defer capture.mu.Unlock()
	key := &counts
	capture.sources[key] = true
	return func() {
		capture.mu.Lock()
		defer capture.mu.Unlock()
		if capture.sources[key] {
			last := counts()
			last.Queued, last.Unfolded = 0, 0
			capture.retired = capture.retired.add(last)
			delete(capture.sources, key)
		}
	}
}

func (c *captureCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.events
	ch <- c.queue
	ch <- c.unfolded
	ch <- c.commits
	ch <- c.commitS
}

func (c *captureCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sum := c.retired
	for f := range c.sources {
		sum = sum.add((*f)())
	}
	none := len(c.sources) == 0 && c.retired == CaptureCounts{}
	c.mu.Unlock()
	if none {
		return // a process without capture (no api role) has no such numbers
	}
	for outcome, n := range map[string]int64{"accepted": sum.Stored, "unknown_key": sum.UnknownKey, "malformed": sum.Malformed,
		"queue_full": sum.QueueFull, "write_failed": sum.WriteFailed, "rate_limited": sum.RateLimited} {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(n), outcome)
	}
	ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(sum.Queued))
	ch <- prometheus.MustNewConstMetric(c.unfolded, prometheus.GaugeValue, float64(sum.Unfolded))
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(sum.Commits))
	ch <- prometheus.MustNewConstMetric(c.commitS, prometheus.CounterValue, sum.CommitSeconds)
}

// Provisioned counts one resource's provisioning outcome (ready, failed).
func Provisioned(kind, outcome string) { provisioning.WithLabelValues(kind, outcome).Inc() }

// Healed counts an operator's heal: requested is whether something was
// re-provisioned.
func Healed(requested bool) {
	if requested {
		heals.WithLabelValues("requested").Inc()
	} else {
		heals.WithLabelValues("healthy").Inc()
	}
}

// SweepRan counts one pass of a background sweep.
// A pass cut short by shutdown (context.Canceled) is not counted.
func SweepRan(sweep string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	sweepRuns.WithLabelValues(sweep, outcome(err)).Inc()
}

// SweepLeaseHeld records whether this process holds the lease of a sweep.
func SweepLeaseHeld(sweep string, held bool) {
	v := 0.0
	if held {
		v = 1
	}
	sweepLeases.WithLabelValues(sweep).Set(v)
}

// Surfaces of rate-limit refusals besides the listeners' roles.
const (
	SurfaceConnectorTool = "connector_tool"
	SurfaceAgentTool     = "agent_tool"
)

// RateLimited counts one rate_limited refusal on surface.
func RateLimited(surface string) { rateLimited.WithLabelValues(surface).Inc() }

// ConnectorToolCalled counts one connector tool call by its outcome: ok,
// or the error case of its refusal (a rate_limited one counts as one of
// the connector_tool surface too).
func ConnectorToolCalled(tool string, err error) {
	o := OutcomeOK
	if err != nil {
		o = string(models.ErrorCodeOf(err))
	}
	connectorCalls.WithLabelValues(tool, o).Inc()
	if models.IsCode(err, models.CodeRateLimited) {
		RateLimited(SurfaceConnectorTool)
	}
}

func outcome(err error) string {
	if err != nil {
		return OutcomeError
	}
	return OutcomeOK
}
