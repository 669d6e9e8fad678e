package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"sync"

	"holdco/scripts/internal/harness"
)

var (
	balanceCredits   = flag.Int64("balance-credits", 10, "balance: the account's credits when the messages start")
	balanceMessages  = flag.Int("balance-messages", 50, "balance: messages sent at once")
	balanceCompanies = flag.Int("balance-companies", 25, "balance: companies the messages go to (each runs one turn at a time)")
)

// partBalance: many messages at once on a small balance (issue 24 item
// 16: with 10 credits, 50 messages started 25 turns and 26 model calls,
// of which 5 were charged and 21 ran unpaid). Every model call that runs
// must be paid: calls made = calls charged, credits charged ≤ the
// balance.
func partBalance(ctx context.Context, r *run) error {
	const part = "balance"
	// Calls of half a second: the concurrent turns' calls overlap.
	s, u, err := r.signedIn(ctx, part, map[string]string{"HOLDCO_LLM_SCRIPTED_STEP_DELAY": "500ms"}, "balance@example.com")
	if err != nil {
		return err
	}
	cos, err := u.companies("Balance Shop", *balanceCompanies)
	if err != nil {
		return err
	}
	if err := u.setBalance(ctx, r.work, *balanceCredits); err != nil {
		return err
	}
	callsBefore, err := s.metric("holdco_model_calls_total")
	if err != nil {
		return err
	}

	n := *balanceMessages
	answers := make([]harness.Answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i] = harness.Do("POST", s.api+"/companies/"+cos[i%len(cos)]+"/messages", u.key, map[string]string{"message": fmt.Sprintf("Balance check %d", i+1)})
		})
	}
	close(start)
	wg.Wait()
	answered := map[string]int{}
	var turnIDs []string
	for _, a := range answers {
		var b struct {
			TurnID string `json:"turn_id"`
			Code   string `json:"error"`
		}
		_ = json.Unmarshal(a.Body, &b)
		k := strconv.Itoa(a.Status)
		if b.Code != "" {
			k += " " + b.Code
		}
		answered[k]++
		if a.Status == 202 && b.TurnID != "" {
			turnIDs = append(turnIDs, b.TurnID)
		}
	}
	statuses := map[string]int{}
	for _, id := range turnIDs {
		st := u.waitTurn(id, *bound)
		var code string
		_ = s.db.QueryRowContext(ctx, `SELECT error_code FROM turns WHERE id = $1`, id).Scan(&code)
		if code != "" {
			st += "/" + code
		}
		statuses[st]++
	}
	callsAfter, err := s.metric("holdco_model_calls_total")
	if err != nil {
		return err
	}
	made := int64(callsAfter - callsBefore)
	var charged, credits, steps, holds int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), COALESCE(-sum(amount), 0) FROM credit_ledger_entries WHERE conglomerate_id = $1 AND type = 'TOKEN_USAGE_PARTIAL'`, u.cong).Scan(&charged, &credits); err != nil {
		return err
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT DISTINCT m.turn_id, m.step FROM turn_messages m JOIN turns t ON t.id = m.turn_id WHERE t.conglomerate_id = $1 AND m.role = 'assistant') x`, u.cong).Scan(&steps); err != nil {
		return err
	}
	// The price of each stored call (docs/turns.md: one credit per
	// started 4,000 input tokens plus one per started 1,000 output
	// tokens, at least one).
	var priced int64
	rows, err := s.db.QueryContext(ctx, `SELECT max(m.input_tokens), max(m.output_tokens) FROM turn_messages m JOIN turns t ON t.id = m.turn_id
WHERE t.conglomerate_id = $1 AND m.role = 'assistant' GROUP BY m.turn_id, m.step`, u.cong)
	if err != nil {
		return err
	}
	for rows.Next() {
		var in, out int64
		if err := rows.Scan(&in, &out); err != nil {
			rows.Close()
			return err
		}
		priced += max((in+3999)/4000+(out+999)/1000, 1)
	}
	rows.Close()
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM credit_reservations WHERE conglomerate_id = $1 AND expires_at > now()`, u.cong).Scan(&holds); err != nil {
		return err
	}
	balance, err := u.balance()
	if err != nil {
		return err
	}
	figure(part, "%d messages at once to %d companies on %d credits: answers %s", n, len(cos), *balanceCredits, describeCounts(answered))
	figure(part, "%d turns started, ended %s", len(turnIDs), describeCounts(statuses))
	figure(part, "model calls made %d (holdco_model_calls_total), model steps stored %d priced %d credits, calls charged %d for %d credits; balance after %d, live holds %d",
		made, steps, priced, charged, credits, balance, holds)

	active := 0
	for st, c := range statuses {
		if st == "queued" || st == "running" {
			active += c
		}
	}
	r.check(part, "calls made ≤ what the balance pays", made == charged && made == steps && priced == credits && credits <= *balanceCredits &&
		balance == *balanceCredits-credits && balance >= 0,
		fmt.Sprintf("every model call charged its whole price (made = charged, credits priced = credits charged ≤ %d), balance = %d − charged ≥ 0", *balanceCredits, *balanceCredits),
		fmt.Sprintf("%d calls made, %d charged (%d without a charge); priced %d credits, charged %d (%d unpaid); balance %d", made, charged, made-charged, priced, credits, priced-credits, balance))
	r.check(part, "every started turn ends, no hold left", active == 0 && holds == 0 && len(turnIDs) > 0,
		"≥ 1 turn started; 0 turns left queued or running; 0 live holds",
		fmt.Sprintf("%d turns started, %d left queued or running, %d live holds", len(turnIDs), active, holds))
	return nil
}
