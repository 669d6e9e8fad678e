package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"holdco/scripts/internal/harness"
)

var (
	pgDown         = flag.Duration("pg-down", 40*time.Second, "postgres: how long Postgres stays stopped")
	pgWarmup       = flag.Duration("pg-warmup", 10*time.Second, "postgres: traffic before the stop")
	pgAfter        = flag.Duration("pg-after", 15*time.Second, "postgres: traffic after the recovery")
	pgStopMode     = flag.String("pg-stop-mode", "fast", "postgres: pg_ctl stop mode (fast, immediate)")
	captureWorkers = flag.Int("capture-workers", 8, "postgres: concurrent capture clients")
	writeWorkers   = flag.Int("write-workers", 2, "postgres: concurrent REST clients (a write, then a read)")
	killCapture    = flag.Duration("kill-capture-after", 10*time.Second, "postgres: capture before holdco is killed -9")
	maxErrorLines  = flag.Int("max-error-lines", 10, "postgres: most ERROR lines the outage may log (one per outage and component, not one per request)")
	retryPause     = flag.Duration("retry-pause", 100*time.Millisecond, "postgres: longest pause of a client after a 5xx or a connection error (it honours a shorter Retry-After): clients that retry at once, as a flood does")
)

// tally counts the answers of the traffic by phase and keeps what was
// acknowledged.
type tally struct {
	phase atomic.Value // string

	mu        sync.Mutex
	answers   map[string]map[string]int // phase -> "class status" -> n
	events    []string                  // distinct ids of events answered 200
	prospects []string                  // names of prospects answered 201
	bad       map[string][]string       // phase -> examples of 500, 502, 503 without Retry-After
	firstOK   map[string]time.Time      // class -> first success after the phase "recovery" began
}

func newTally() *tally {
	t := &tally{answers: map[string]map[string]int{}, bad: map[string][]string{}, firstOK: map[string]time.Time{}}
	t.phase.Store("before")
	return t
}

func (t *tally) note(class string, a harness.Answer, ok bool) {
	ph := t.phase.Load().(string)
	key := class + " " + strconv.Itoa(a.Status)
	if a.Status == http.StatusServiceUnavailable {
		if a.Header.Get("Retry-After") != "" {
			key += "+Retry-After"
		} else {
			key += " without Retry-After"
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answers[ph] == nil {
		t.answers[ph] = map[string]int{}
	}
	t.answers[ph][key]++
	if a.Status >= 500 && (a.Status != http.StatusServiceUnavailable || a.Header.Get("Retry-After") == "") && len(t.bad[ph]) < 5 {
		t.bad[ph] = append(t.bad[ph], fmt.Sprintf("%s %d %.200s", class, a.Status, a.Body))
	}
	if ok && ph == "recovery" {
		if _, seen := t.firstOK[class]; !seen {
			t.firstOK[class] = time.Now()
		}
	}
}

// count sums the answers of a phase whose key passes keep.
func (t *tally) count(phase string, keep func(string) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.answers[phase] {
		if keep(k) {
			n += v
		}
	}
	return n
}

// traffic runs capture and REST clients until stop is closed: capture
// sends one event per request (a distinct id each), the REST clients
// create a prospect and read the company. After a 5xx or a connection
// error a client pauses for -retry-pause (or a shorter Retry-After).
func traffic(s *server, u *user, co, key, prefix string, t *tally, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	pause := func(a harness.Answer) {
		if a.Status == 0 || a.Status >= 500 {
			d := *retryPause
			if v, err := strconv.Atoi(a.Header.Get("Retry-After")); err == nil {
				d = min(d, time.Duration(v)*time.Second)
			}
			time.Sleep(d)
		}
	}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for w := range *captureWorkers {
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				id := fmt.Sprintf("%s%d-%d", prefix, w, i)
				a := harness.Do("POST", s.api+"/analytics/e/", "", map[string]any{"api_key": key, "event": "$pageview", "distinct_id": id,
					"properties": map[string]string{"$current_url": "http://outage.test/p" + strconv.Itoa(i%20)}})
				t.note("capture", a, a.Status == 200)
				if a.Status == 200 {
					t.mu.Lock()
					t.events = append(t.events, id)
					t.mu.Unlock()
				}
				pause(a)
			}
		})
	}
	for w := range *writeWorkers {
		wg.Go(func() {
			for i := 0; !stopped(); i++ {
				name := fmt.Sprintf("Lead %s%d-%d", prefix, w, i)
				a := harness.Do("POST", s.api+"/companies/"+co+"/prospects", u.key, map[string]string{"name": name})
				t.note("write", a, a.Status == 201)
				if a.Status == 201 {
					t.mu.Lock()
					t.prospects = append(t.prospects, name)
					t.mu.Unlock()
				}
				pause(a)
				a = harness.Do("GET", s.api+"/companies/"+co, u.key, nil)
				t.note("read", a, a.Status == 200)
				pause(a)
			}
		})
	}
	return &wg
}

// storedSet is a column's values for the company.
func storedSet(ctx context.Context, s *server, query, co string) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, query, co)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

func missing(acked []string, stored map[string]bool) int {
	n := 0
	for _, v := range acked {
		if !stored[v] {
			n++
		}
	}
	return n
}

// partPostgres: Postgres restarted under capture and REST traffic
// (issue 24 item 17: a 44 s restart dropped 30,820 of 53,330 events
// answered 200, request paths answered 500, 3,184 ERROR lines), then a
// kill -9 of holdco under capture.
func partPostgres(ctx context.Context, r *run) error {
	const part = "postgres"
	s, u, err := r.signedIn(ctx, part, nil, "outage@example.com")
	if err != nil {
		return err
	}
	cos, err := u.companies("Outage Shop", 1)
	if err != nil {
		return err
	}
	co := cos[0]
	var summary struct {
		Key string `json:"key"`
	}
	if err := harness.JSONCall("GET", s.api+"/companies/"+co+"/analytics/summary?range=1d", u.key, nil, 200, &summary); err != nil {
		return err
	}
	pid := s.p.PID()

	t := newTally()
	stop := make(chan struct{})
	wg := traffic(s, u, co, summary.Key, "r", t, stop)
	time.Sleep(*pgWarmup)

	logFrom := harness.Size(s.p.LogPath)
	t.phase.Store("outage")
	down := time.Now()
	log.Printf("postgres: pg_ctl stop -m %s under traffic", *pgStopMode)
	if err := r.pg.Stop(ctx, *pgStopMode); err != nil {
		close(stop)
		wg.Wait()
		return err
	}
	time.Sleep(time.Until(down.Add(*pgDown)))
	if err := r.pg.Start(ctx); err != nil {
		close(stop)
		wg.Wait()
		return err
	}
	up := time.Now()
	t.phase.Store("recovery")
	log.Printf("postgres: started again after %s", up.Sub(down).Round(100*time.Millisecond))
	recovered := harness.Eventually(*bound, 100*time.Millisecond, func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, c := t.firstOK["capture"]
		_, w := t.firstOK["write"]
		return c && w
	})
	t.phase.Store("after")
	recoveredAt := time.Now()
	time.Sleep(*pgAfter)
	close(stop)
	wg.Wait()
	logTo := harness.Size(s.p.LogPath)
	sameProcess := s.p.PID() == pid && s.p.Starts() == 1
	select {
	case <-s.p.Exited():
		sameProcess = false
	default:
	}

	events, err := storedSet(ctx, s, `SELECT distinct_id FROM analytics_events WHERE company_id = $1`, co)
	if err != nil {
		return err
	}
	prospects, err := storedSet(ctx, s, `SELECT name FROM company_prospects WHERE company_id = $1`, co)
	if err != nil {
		return err
	}
	t.mu.Lock()
	ackedEvents, ackedProspects := len(t.events), len(t.prospects)
	lostEvents, lostProspects := missing(t.events, events), missing(t.prospects, prospects)
	capRecovery, writeRecovery := t.firstOK["capture"].Sub(up), t.firstOK["write"].Sub(up)
	for _, ph := range []string{"before", "outage", "recovery", "after"} {
		figure(part, "answers %s: %s", ph, describeCounts(t.answers[ph]))
	}
	bad := append(append(append([]string{}, t.bad["before"]...), t.bad["outage"]...), append(t.bad["recovery"], t.bad["after"]...)...)
	t.mu.Unlock()
	errs, msgs := errorLines(s.p.LogPath, logFrom, logTo)
	figure(part, "Postgres stopped (-m %s) for %s; capture answered 200 again %s and REST writes 201 %s after it was back",
		*pgStopMode, up.Sub(down).Round(100*time.Millisecond), capRecovery.Round(time.Millisecond), writeRecovery.Round(time.Millisecond))
	figure(part, "ERROR lines from the stop to the end of the traffic (%s): %d: %s", logTimeSpan(down, recoveredAt.Add(*pgAfter)), errs, describeMsgs(msgs))

	fivexx := func(phase string) int {
		return t.count(phase, func(k string) bool {
			return strings.Contains(k, " 5") && !strings.HasSuffix(k, "503+Retry-After")
		})
	}
	outage503 := t.count("outage", func(k string) bool { return strings.HasSuffix(k, "503+Retry-After") })
	r.check(part, "acknowledged writes kept", lostEvents == 0 && lostProspects == 0,
		"every event answered 200 and every prospect answered 201 is stored (0 lost)",
		fmt.Sprintf("events: %d answered 200, %d stored, %d lost; prospects: %d answered 201, %d lost", ackedEvents, len(events), lostEvents, ackedProspects, lostProspects))
	r.check(part, "answers during the outage", outage503 > 0 && fivexx("before")+fivexx("outage")+fivexx("recovery")+fivexx("after") == 0,
		"503 with Retry-After while Postgres is down; no 500, no 502, no 503 without Retry-After at any time",
		fmt.Sprintf("%d answers 503+Retry-After during the outage; other 5xx: before %d, outage %d, recovery %d, after %d %s",
			outage503, fivexx("before"), fivexx("outage"), fivexx("recovery"), fivexx("after"), strings.Join(first(bad, 3), "; ")))
	r.check(part, "ERROR lines", errs <= *maxErrorLines && errs > 0,
		fmt.Sprintf("the outage logged (≥ 1), once per component, not per request (≤ %d lines)", *maxErrorLines),
		fmt.Sprintf("%d ERROR lines for %d answers refused during the outage", errs, outage503))
	r.check(part, "recovers without a restart", recovered && sameProcess,
		"the same holdco process answers capture 200 and writes 201 once Postgres is back, within the bound",
		fmt.Sprintf("same process %v (pid %d), recovered %v (capture %s, writes %s after Postgres was back)", sameProcess, pid, recovered,
			capRecovery.Round(time.Millisecond), writeRecovery.Round(time.Millisecond)))

	// kill -9 of holdco under capture (Postgres up): nothing answered 200
	// may be missing afterwards.
	k := newTally()
	stop = make(chan struct{})
	wg = traffic(s, u, co, summary.Key, "k", k, stop)
	time.Sleep(*killCapture)
	s.p.Kill9()
	close(stop)
	wg.Wait()
	if _, err := s.restart(); err != nil {
		return fmt.Errorf("restart after kill -9: %w", err)
	}
	events, err = storedSet(ctx, s, `SELECT distinct_id FROM analytics_events WHERE company_id = $1`, co)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var kStored int
	for id := range events {
		if strings.HasPrefix(id, "k") {
			kStored++
		}
	}
	lost := missing(k.events, events)
	r.check(part, "kill -9 of holdco during capture", lost == 0 && len(k.events) > 0,
		"every event answered 200 before the kill is stored (0 lost)",
		fmt.Sprintf("%d events answered 200 in %s, %d stored (%d sent but unanswered were stored too), %d lost", len(k.events), *killCapture, kStored, kStored-len(k.events)+lost, lost))
	return nil
}

func logTimeSpan(from, to time.Time) string {
	return to.Sub(from).Round(time.Second).String()
}

// jsonField reads one string field of a JSON body.
func jsonField(b []byte, field string) string {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	v, _ := m[field].(string)
	return v
}
