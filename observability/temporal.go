package observability

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.temporal.io/sdk/client"
)

// TemporalMetrics is the Temporal SDK's metrics handler (client.Options
// MetricsHandler) writing to Registry: the SDK's counters as
// <name>_total, its timers as <name>_seconds histograms, its gauges as
// they are. One collector serves every client of the process.
func TemporalMetrics() client.MetricsHandler { return sdkHandler{c: temporalSDK} }

// temporalSDK collects the SDK's series. The SDK may use one metric name
// with different tag sets; Prometheus wants one label set per name, so a
// family's labels are the union of its series' tags, missing ones empty.
var temporalSDK = &sdkCollector{families: map[string]*sdkFamily{}}

type sdkKind int

const (
	sdkCounter sdkKind = iota
	sdkGauge
	sdkTimer
)

// sdkTimerBuckets are in seconds: the SDK times polls (up to a minute),
// requests and task executions.
var sdkTimerBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type sdkCollector struct {
	mu       sync.Mutex
	families map[string]*sdkFamily // by Prometheus name
}

type sdkFamily struct {
	name, help string
	kind       sdkKind
	series     map[string]*sdkSeries // by the tags' key
}

type sdkSeries struct {
	tags    map[string]string
	count   atomic.Int64  // counter
	gauge   atomic.Uint64 // float64 bits
	latency prometheus.Histogram
}

// series returns the series of name and tags, made on first use.
func (c *sdkCollector) series(kind sdkKind, name string, tags map[string]string) *sdkSeries {
	name = promName(name, kind)
	key := tagKey(tags)
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.families[name]
	if f == nil {
		f = &sdkFamily{name: name, kind: kind, series: map[string]*sdkSeries{},
			help: "Temporal SDK metric " + name + " (see Temporal's SDK metrics reference)."}
		c.families[name] = f
	}
	s := f.series[key]
	if s == nil {
		s = &sdkSeries{tags: tags}
		if kind == sdkTimer {
			s.latency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Buckets: sdkTimerBuckets})
		}
		f.series[key] = s
	}
	return s
}

// Describe sends nothing: the families appear as the SDK uses them (an
// unchecked collector).
func (c *sdkCollector) Describe(chan<- *prometheus.Desc) {}

func (c *sdkCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.families {
		labelSet := map[string]bool{}
		for _, s := range f.series {
			for k := range s.tags {
				labelSet[k] = true
			}
		}
		labels := slices.Sorted(maps.Keys(labelSet))
		desc := prometheus.NewDesc(f.name, f.help, labels, nil)
		for _, s := range f.series {
			values := make([]string, len(labels))
			for i, l := range labels {
				values[i] = s.tags[l]
			}
			var m prometheus.Metric
			var err error
			switch f.kind {
			case sdkCounter:
				m, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, float64(s.count.Load()), values...)
			case sdkGauge:
				m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, math.Float64frombits(s.gauge.Load()), values...)
			case sdkTimer:
				var d dto.Metric
				if err = s.latency.Write(&d); err == nil {
					h := d.GetHistogram()
					buckets := make(map[float64]uint64, len(h.GetBucket()))
					for _, b := range h.GetBucket() {
						buckets[b.GetUpperBound()] = b.GetCumulativeCount()
					}
					m, err = prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
				}
			}
			if err == nil {
				ch <- m
			}
		}
	}
}

// promName turns an SDK metric name into a Prometheus one: characters
// outside [a-zA-Z0-9_] become _, counters end in _total, timers in
// _seconds.
func promName(name string, kind sdkKind) string {
	name = sanitize(name)
	switch kind {
	case sdkCounter:
		if !strings.HasSuffix(name, "_total") {
			name += "_total"
		}
	case sdkTimer:
		if !strings.HasSuffix(name, "_seconds") {
			name += "_seconds"
		}
	}
	return name
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func tagKey(tags map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(tags[k])
		b.WriteByte(0)
	}
	return b.String()
}

// sdkHandler is one tagged view of the collector.
type sdkHandler struct {
	c    *sdkCollector
	tags map[string]string
}

func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	maps.Copy(merged, h.tags)
	for k, v := range tags {
		merged[sanitize(k)] = v
	}
	return sdkHandler{c: h.c, tags: merged}
}

func (h sdkHandler) Counter(name string) client.MetricsCounter {
	s := h.c.series(sdkCounter, name, h.tags)
	return sdkCounterFunc(func(d int64) { s.count.Add(d) })
}

func (h sdkHandler) Gauge(name string) client.MetricsGauge {
	s := h.c.series(sdkGauge, name, h.tags)
	return sdkGaugeFunc(func(v float64) { s.gauge.Store(math.Float64bits(v)) })
}

func (h sdkHandler) Timer(name string) client.MetricsTimer {
	s := h.c.series(sdkTimer, name, h.tags)
	return sdkTimerFunc(func(d time.Duration) { s.latency.Observe(d.Seconds()) })
}

type sdkCounterFunc func(int64)

func (f sdkCounterFunc) Inc(d int64) { f(d) }

type sdkGaugeFunc func(float64)

func (f sdkGaugeFunc) Update(v float64) { f(v) }

type sdkTimerFunc func(time.Duration)

func (f sdkTimerFunc) Record(d time.Duration) { f(d) }
