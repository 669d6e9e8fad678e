package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"path/filepath"
	"strconv"
	"time"

	"holdco/scripts/internal/harness"
)

var (
	temporalDown = flag.Duration("temporal-down", 30*time.Second, "temporal: how long the standalone Temporal stays stopped")
	temporalKill = flag.Bool("temporal-kill", false, "temporal: stop Temporal with kill -9 instead of SIGTERM")
)

// partTemporal: holdco on a standalone Temporal (`holdco temporal`, as
// docs/scaling.md runs one) that stops: creates answer 201 and are
// provisioned by the outbox's sweeper once Temporal is back; messages
// answer 202 and their turns (queued rows) are started by the turn sweeper
// once it is back; afterwards the work completes without restarting holdco.
func partTemporal(ctx context.Context, r *run) error {
	const part = "temporal"
	tdir := harness.Mkdir(r.work, "temporal-server")
	tport := harness.FreePort()
	tp := &harness.Proc{Name: "temporal", Bin: r.bin, Args: []string{"temporal", "--port", strconv.Itoa(tport), "--ui-port", "0"}, Dir: tdir,
		LogPath: filepath.Join(r.work, "temporal-server.log"),
		Env:     harness.Environ(map[string]string{"HOLDCO_DATA_DIR": tdir, "HOLDCO_TEMPORAL_START_TIMEOUT": "5m"})}
	if err := tp.Start(); err != nil {
		return err
	}
	defer tp.Stop()
	const readyLine = "Temporal development server ready"
	if _, err := harness.FirstLine(tp.LogPath, readyLine, *bound); err != nil {
		return err
	}
	s, u, err := r.signedIn(ctx, part, map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:" + strconv.Itoa(tport), "TEMPORAL_NAMESPACE": "default"}, "temporal@example.com")
	if err != nil {
		return err
	}
	if err := u.setBalance(ctx, r.work, 1000); err != nil {
		return err
	}
	cos, err := u.companies("Temporal Shop", 1)
	if err != nil {
		return err
	}
	a := cos[0]
	if st, err := u.message(a, "Before the outage"); err != nil || st != "completed" {
		return fmt.Errorf("the turn before the outage: %s %v", st, err)
	}

	// Temporal stops.
	logFrom := harness.Size(s.p.LogPath)
	if *temporalKill {
		tp.Kill9()
	} else {
		tp.Stop()
	}
	down := time.Now()
	log.Printf("temporal: stopped")
	t := time.Now()
	create := harness.Do("POST", s.api+"/conglomerates/"+u.cong+"/companies", u.key, map[string]string{"name": "Temporal Shop B", "idea": "Sell maps while Temporal is down"})
	createTook := time.Since(t)
	b := jsonField(create.Body, "id")
	t = time.Now()
	msg := harness.Do("POST", s.api+"/companies/"+a+"/messages", u.key, map[string]string{"message": "During the outage"})
	msgTook := time.Since(t)
	read := harness.Do("GET", s.api+"/companies/"+a, u.key, nil)
	health := harness.Do("GET", s.api+"/health", "", nil)
	var stored int
	_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE company_id = $1 AND message = 'During the outage'`, a).Scan(&stored)
	time.Sleep(time.Until(down.Add(*temporalDown)))
	readyDuring := b != "" && u.ready(b)
	alive := true
	select {
	case <-s.p.Exited():
		alive = false
	default:
	}

	// Temporal is back (same data).
	off := harness.Size(tp.LogPath)
	if err := tp.Start(); err != nil {
		return err
	}
	if _, err := harness.LineAfter(tp.LogPath, off, readyLine, *bound); err != nil {
		return err
	}
	up := time.Now()
	log.Printf("temporal: back after %s", up.Sub(down).Round(100*time.Millisecond))
	var provisioned time.Duration
	if b != "" && harness.Eventually(*bound, 500*time.Millisecond, func() bool { return u.ready(b) }) {
		provisioned = time.Since(up)
	}
	duringID, during := jsonField(msg.Body, "turn_id"), ""
	var duringTook time.Duration
	if duringID != "" {
		during, duringTook = u.waitTurn(duringID, *bound), time.Since(up)
	}
	t = time.Now()
	afterA, errA := u.message(a, "After the outage")
	afterATook := time.Since(t)
	afterB, errB := "", error(nil)
	if provisioned > 0 {
		afterB, errB = u.message(b, "After the outage too")
	}
	logTo := harness.Size(s.p.LogPath)
	errs, msgs := errorLines(s.p.LogPath, logFrom, logTo)
	sameProcess := s.p.Starts() == 1 && alive

	figure(part, "Temporal stopped (%s) for %s; during it: create %d in %s, message %d %q Retry-After %q in %s (turn rows left: %d), company read %d, /health %d, the new company provisioned %v",
		map[bool]string{true: "kill -9", false: "SIGTERM"}[*temporalKill], up.Sub(down).Round(100*time.Millisecond), create.Status, createTook.Round(time.Millisecond),
		msg.Status, jsonField(msg.Body, "error"), msg.Header.Get("Retry-After"), msgTook.Round(time.Millisecond), stored, read.Status, health.Status, readyDuring)
	figure(part, "after it: the company created during the outage provisioned in %s, the message sent during it %s %s after, a message's turn %s in %s; ERROR lines from the stop to the end: %d: %s",
		provisioned.Round(100*time.Millisecond), during, duringTook.Round(100*time.Millisecond), afterA, afterATook.Round(100*time.Millisecond), errs, describeMsgs(msgs))

	r.check(part, "creates answer during the outage", create.Status == 201 && b != "",
		"201 with the company", fmt.Sprintf("%d in %s %.200s", create.Status, createTook.Round(time.Millisecond), create.Body))
	r.check(part, "messages during the outage", msg.Status == 202 && duringID != "" && stored == 1 && during == "completed",
		"202 with the queued turn, its row kept; the turn completes once Temporal is back (the turn sweeper starts it)",
		fmt.Sprintf("%d, %d turn rows, the turn %s: %.200s", msg.Status, stored, during, msg.Body))
	r.check(part, "reads during the outage", read.Status == 200, "200 (the database is up)", strconv.Itoa(read.Status))
	r.check(part, "swept later", provisioned > 0 && errB == nil && afterB == "completed",
		"the company created during the outage is provisioned once Temporal is back, and its agent works",
		fmt.Sprintf("provisioned %v after %s; its turn %s %v", provisioned > 0, provisioned.Round(100*time.Millisecond), afterB, errB))
	r.check(part, "work completes after the outage", errA == nil && afterA == "completed" && sameProcess,
		"a message's turn completes once Temporal is back, on the same holdco process",
		fmt.Sprintf("turn %s %v; same process %v", afterA, errA, sameProcess))
	return nil
}

// message sends a message (again while a turn runs or the service does
// not answer it, for up to the bound) and waits for its turn to end.
func (u *user) message(co, text string) (string, error) {
	var last harness.Answer
	var id string
	harness.Eventually(*bound, time.Second, func() bool {
		last = harness.Do("POST", u.s.api+"/companies/"+co+"/messages", u.key, map[string]string{"message": text})
		if last.Status == 202 {
			var t struct {
				TurnID string `json:"turn_id"`
			}
			_ = json.Unmarshal(last.Body, &t)
			id = t.TurnID
			return true
		}
		return last.Status != 409 && last.Status < 500 && last.Status != 0
	})
	if id == "" {
		return "", fmt.Errorf("message: %d %.200s", last.Status, last.Body)
	}
	return u.waitTurn(id, *bound), nil
}
