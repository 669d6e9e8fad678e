package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"holdco/scripts/internal/harness"
)

var (
	killTurns     = flag.Int("kill-turns", 100, "kills: messages (agent turns) in all")
	killCount     = flag.Int("kills", 28, "kills: kill -9 of holdco serve while the turns run")
	killCompanies = flag.Int("kill-companies", 5, "kills: companies the messages go to (each runs one turn at a time)")
	killJitter    = flag.Duration("kill-jitter", 3*time.Second, "kills: a kill comes at a random moment within this after its share of the messages was acknowledged")
)

// partKills: messages whose turns call create_task (the scripted model's
// plan: write_document, create_task, the answer) while holdco serve is
// killed -9 at random moments and restarted on the same data. Issue 24
// item 15 (a create_task committed just before a kill was made again by
// the retried step) and the charges of the retried model steps.
func partKills(ctx context.Context, r *run) error {
	const part = "kills"
	s, u, err := r.signedIn(ctx, part, nil, "kills@example.com")
	if err != nil {
		return err
	}
	if err := u.setBalance(ctx, r.work, 1_000_000); err != nil {
		return err
	}
	cos, err := u.companies("Kill Shop", *killCompanies)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(*seed), 15))

	var (
		mu      sync.Mutex
		acked   = map[string]string{} // turn id -> message
		refused []string
		ackedN  atomic.Int64
		wg      sync.WaitGroup
	)
	total := *killTurns
	t0 := time.Now()
	for k, co := range cos {
		n := total / len(cos)
		if k < total%len(cos) {
			n++
		}
		wg.Go(func() {
			for i := range n {
				// A message not acknowledged (the server was killed under
				// it) or refused because a turn runs (perhaps the one its
				// lost answer started) is sent again as a new message with
				// its own text: every turn's text, and so its task's
				// title, is its own.
				for attempt := 0; ; attempt++ {
					text := fmt.Sprintf("Kill check %d.%d try %d", k+1, i+1, attempt+1)
					a := harness.Do("POST", s.api+"/companies/"+co+"/messages", u.key, map[string]string{"message": text})
					if a.Status == 202 {
						var t struct {
							TurnID string `json:"turn_id"`
						}
						if json.Unmarshal(a.Body, &t) != nil || t.TurnID == "" {
							mu.Lock()
							refused = append(refused, fmt.Sprintf("202 without a turn id: %.200s", a.Body))
							mu.Unlock()
							break
						}
						mu.Lock()
						acked[t.TurnID] = text
						mu.Unlock()
						ackedN.Add(1)
						u.waitTurn(t.TurnID, *bound)
						break
					}
					if (a.Status == 409 || harness.Unacknowledged(a.Status)) && attempt < 1000 {
						time.Sleep(time.Second)
						continue
					}
					mu.Lock()
					refused = append(refused, fmt.Sprintf("%d %.200s", a.Status, a.Body))
					mu.Unlock()
					break
				}
			}
		})
	}
	sendersDone := make(chan struct{})
	go func() { wg.Wait(); close(sendersDone) }()

	// The kills: the k-th once k/(kills+1) of the messages are
	// acknowledged, at a random moment within the jitter after that.
	var restarts []time.Duration
	kills, killsInFlight, turnsCut := 0, 0, 0
	var restartErr error
loop:
	for k := 1; k <= *killCount; k++ {
		target := int64(k * total / (*killCount + 1))
		for ackedN.Load() < target {
			select {
			case <-sendersDone:
				break loop
			case <-time.After(100 * time.Millisecond):
			}
		}
		select {
		case <-sendersDone:
			break loop
		case <-time.After(time.Duration(rng.Int64N(int64(*killJitter) + 1))):
		}
		var inFlight int
		_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE status = 'running'`).Scan(&inFlight)
		s.p.Kill9()
		kills++
		if inFlight > 0 {
			killsInFlight++
			turnsCut += inFlight
		}
		d, err := s.restart()
		if err != nil {
			restartErr = err
			break
		}
		restarts = append(restarts, d)
		log.Printf("kills: kill %d of %d with %d of %d messages acknowledged; serving again in %s", kills, *killCount, ackedN.Load(), total, d.Round(100*time.Millisecond))
	}
	if restartErr != nil {
		return fmt.Errorf("restart after kill %d: %w", kills, restartErr)
	}
	<-sendersDone
	log.Printf("kills: every message sent (%s); waiting for every turn to end", time.Since(t0).Round(time.Second))

	// Every turn stored ends (the sweeper starts a turn a kill left
	// queued; a turn's retried steps finish it).
	var active int
	harness.Eventually(*bound, time.Second, func() bool {
		active = -1
		_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE status IN ('queued', 'running')`).Scan(&active)
		return active == 0
	})

	// What each turn did and was charged.
	rows, err := s.db.QueryContext(ctx, `
SELECT t.id, t.status, t.error_code, t.message, COALESCE(t.credits_cost, -1),
  (SELECT count(*) FROM company_tasks k WHERE k.company_id = t.company_id AND k.title = 'Follow up: ' || t.message),
  (SELECT count(DISTINCT m.step) FROM turn_messages m WHERE m.turn_id = t.id AND m.role = 'assistant'),
  (SELECT count(*) FROM credit_ledger_entries e WHERE e.run_id = t.id AND e.type = 'TOKEN_USAGE_PARTIAL'),
  (SELECT COALESCE(-sum(e.amount), 0) FROM credit_ledger_entries e WHERE e.run_id = t.id)
FROM turns t`)
	if err != nil {
		return err
	}
	defer rows.Close()
	type turnRow struct {
		id, status, errCode, message     string
		cost, tasks, steps, charges, sum int64
	}
	var turns []turnRow
	for rows.Next() {
		var t turnRow
		if err := rows.Scan(&t.id, &t.status, &t.errCode, &t.message, &t.cost, &t.tasks, &t.steps, &t.charges, &t.sum); err != nil {
			return err
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var allTasks int64
	_ = s.db.QueryRowContext(ctx, `SELECT count(*) FROM company_tasks`).Scan(&allTasks)

	stored := map[string]turnRow{}
	statuses := map[string]int{}
	var duplicates, missingEffects, doubleCharged, unpaid, costMismatch, modelSteps, charges, taskSum int64
	var dupExamples, chargeExamples []string
	for _, t := range turns {
		stored[t.id] = t
		st := t.status
		if t.errCode != "" {
			st += "/" + t.errCode
		}
		statuses[st]++
		taskSum += t.tasks
		modelSteps += t.steps
		charges += t.charges
		if t.tasks > 1 {
			duplicates += t.tasks - 1
			dupExamples = append(dupExamples, fmt.Sprintf("%q: %d tasks", t.message, t.tasks))
		}
		if t.status == "completed" && t.tasks == 0 {
			missingEffects++
		}
		if t.charges > t.steps {
			doubleCharged += t.charges - t.steps
			chargeExamples = append(chargeExamples, fmt.Sprintf("turn %s: %d charges for %d model steps", t.id, t.charges, t.steps))
		}
		if t.charges < t.steps {
			unpaid += t.steps - t.charges
		}
		if t.cost >= 0 && t.cost != t.sum {
			costMismatch++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var lost, ackedCompleted int
	for id := range acked {
		t, ok := stored[id]
		switch {
		case !ok:
			lost++
		case t.status == "completed":
			ackedCompleted++
		}
	}
	sort.Slice(restarts, func(i, j int) bool { return restarts[i] < restarts[j] })
	var median, longest time.Duration
	if len(restarts) > 0 {
		median, longest = restarts[len(restarts)/2], restarts[len(restarts)-1]
	}
	figure(part, "%d messages acknowledged over %d companies, %d turns stored (%d started by a message whose answer a kill cut), %d kills -9, restarts took %s median, %s at most",
		len(acked), len(cos), len(turns), len(turns)-len(acked)+lost, kills, median.Round(100*time.Millisecond), longest.Round(100*time.Millisecond))
	figure(part, "%d kills came while turns ran (%d running turns cut in all)", killsInFlight, turnsCut)
	figure(part, "turns by end: %s", describeCounts(statuses))
	figure(part, "model steps stored %d, model charges %d, tasks %d (%d titled after a turn)", modelSteps, charges, allTasks, taskSum)

	r.check(part, "kills made", kills == *killCount && len(refused) == 0, fmt.Sprintf("%d kills -9, each followed by a restart that serves; every message acknowledged", *killCount),
		fmt.Sprintf("%d kills, %d restarts; %d messages refused %s", kills, len(restarts), len(refused), strings.Join(first(refused, 3), "; ")))
	r.check(part, "every turn ends", active == 0 && lost == 0, "0 turns left queued or running; 0 acknowledged turns missing",
		fmt.Sprintf("%d left queued or running, %d acknowledged turns missing", active, lost))
	r.check(part, "acknowledged turns complete", ackedCompleted == len(acked), fmt.Sprintf("%d of %d completed", len(acked), len(acked)),
		fmt.Sprintf("%d of %d completed (%s)", ackedCompleted, len(acked), describeCounts(statuses)))
	r.check(part, "duplicated tool effects (create_task)", duplicates == 0 && missingEffects == 0 && allTasks == taskSum,
		"0 turns with a second task; every completed turn has its task; no task without its turn",
		fmt.Sprintf("%d duplicated tasks %s; %d completed turns without their task; %d tasks without a turn", duplicates, strings.Join(first(dupExamples, 3), "; "), missingEffects, allTasks-taskSum))
	r.check(part, "double charges", doubleCharged == 0 && unpaid == 0 && costMismatch == 0,
		"one TOKEN_USAGE_PARTIAL charge per stored model step (0 double, 0 unpaid); credits_cost = the turn's ledger sum",
		fmt.Sprintf("%d double charges %s; %d steps without a charge; %d turns whose credits_cost differs from the ledger", doubleCharged, strings.Join(first(chargeExamples, 3), "; "), unpaid, costMismatch))
	return nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func describeCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
