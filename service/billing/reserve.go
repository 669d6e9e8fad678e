package billing

import (
	"context"
	"errors"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// HoldTTL is how long a reservation holds its credits when it is neither
// settled nor released (a process that died between the two): longer than
// any call it covers (a model call's activity times out after 10 minutes).
const HoldTTL = 15 * time.Minute

// Reserve holds u.Credits under u.Key before a call whose effect or price
// comes after: the balance minus the other live reservations must cover
// it, and the daily cap must leave room for it. With atLeast > 0 and less
// than u.Credits free (but at least atLeast), what is free is held (a
// model call holds its maximum price, or what is left). held is what the
// reservation holds; paid is true when the key was charged already (a
// retry after the charge: nothing is held). Refusals are
// insufficient_credits and rate_limited, as Spend's.
//
// The charge that settles it is SpendOnce with the same key (the ledger
// entry takes the reservation's place in one transaction); Release frees
// it. Unsettled, it lapses after HoldTTL.
func (s *Service) Reserve(ctx context.Context, scope store.ConglomerateScope, u Usage, atLeast int64) (held int64, paid bool, err error) {
	if u.Key == "" {
		return 0, false, models.Errorf(models.CodeInvalidArgument, "A reservation needs its key.").WithField("key")
	}
	if !u.Type.Spends() || u.Credits <= 0 {
		return 0, false, models.Errorf(models.CodeInvalidArgument, "A reservation is a positive number of credits of a usage type.").WithField("credits")
	}
	cong, err := s.store.Identity().GetConglomerate(ctx, scope.ID())
	if err != nil {
		return 0, false, err
	}
	now := s.now()
	r := models.CreditReservation{ID: chargeID(scope.ID(), u.Key), Type: u.Type, Amount: u.Credits, CreatedAt: now, ExpiresAt: now.Add(HoldTTL)}
	if u.CompanyID != "" {
		r.CompanyID = &u.CompanyID
	}
	if u.RunID != "" {
		r.RunID = &u.RunID
	}
	r, out, err := s.store.Billing().ReserveCredits(ctx, scope, r, atLeast, cong.DailyCreditCap, dayStart(now))
	switch {
	case errors.Is(err, store.ErrAlreadyCharged):
		return 0, true, nil
	case errors.Is(err, store.ErrInsufficientCredits):
		needed := u.Credits
		if atLeast > 0 {
			needed = atLeast
		}
		return 0, false, s.InsufficientCredits(cong, out.Balance-out.Held, needed)
	case errors.Is(err, store.ErrDailyCapReached):
		return 0, false, models.Errorf(models.CodeRateLimited, "The daily credit cap of %d credits is reached: %d spent today (UTC), %d held by calls in progress, %d more needed. Raise the cap or wait until midnight UTC.",
			*cong.DailyCreditCap, out.SpentToday, out.Held, u.Credits).With("spent_today", out.SpentToday).With("daily_credit_cap", *cong.DailyCreditCap).With("needed", u.Credits)
	case err != nil:
		return 0, false, err
	}
	return r.Amount, false, nil
}

// Release frees the reservation of key (a call that failed before its
// effect); releasing one that is gone is not an error.
func (s *Service) Release(ctx context.Context, scope store.ConglomerateScope, key string) error {
	return s.store.Billing().ReleaseCredits(ctx, scope, chargeID(scope.ID(), key))
}

// PayFor is the one charging rule of a billable act (send_email,
// web_research, generate_image), wherever it is called — an agent's turn,
// the connector or REST: u.Credits is held under u.Key before effect runs,
// so an account that cannot pay gets no effect (insufficient_credits, or
// rate_limited at the daily cap); the hold becomes the TOOL_USAGE charge
// when effect succeeds and is released when it fails. The key names the
// call (an agent's "<turn>/tool/<step>/<index>"), so a retry of a call
// that was charged pays nothing more; effect must then find its earlier
// effect by the same key instead of repeating it (service.EffectID).
//
// The plan must allow paid work (PlanDecision with ActionAgentWork:
// plan_blocked, payment_required, plan_no_ai, plan_expired), as for a
// turn.
func (s *Service) PayFor(ctx context.Context, scope store.ConglomerateScope, u Usage, effect func(context.Context) error) error {
	if u.Credits <= 0 {
		return effect(ctx)
	}
	cong, err := s.store.Identity().GetConglomerate(ctx, scope.ID())
	if err != nil {
		return err
	}
	if e := s.PlanDecision(cong, ActionAgentWork); e != nil {
		return e
	}
	_, paid, err := s.Reserve(ctx, scope, u, 0)
	if err != nil {
		return err
	}
	if paid {
		return effect(ctx)
	}
	// The charge is written even when the caller has gone away.
	record := context.WithoutCancel(ctx)
	if err := effect(ctx); err != nil {
		if rerr := s.Release(record, scope, u.Key); rerr != nil {
			s.logger.WarnContext(ctx, "billing: releasing a hold", "key", u.Key, "error", rerr)
		}
		return err
	}
	// The hold covers the charge (same credits, same key): only a store
	// failure can refuse it, and the hold then lapses uncharged.
	_, _, err = s.SpendOnce(record, scope, u)
	return err
}

// toolCredits are the prices of the billable acts, charged per successful
// call as TOOL_USAGE whoever makes it (an agent, the connector, REST);
// every other tool is free (its cost is in the model calls around it).
var toolCredits = map[string]int64{
	"send_email":     1,
	"web_research":   1,
	"generate_image": 3,
}

// ToolCredits is the price of one successful call of the tool or act
// (0: free).
func ToolCredits(name string) int64 { return toolCredits[name] }

// PayForAct is the one charging rule of a billable act of a company (a
// price in the list above: send_email, web_research, generate_image),
// wherever it is made — an agent's turn, the connector or REST; the use
// case of the act calls it with the company its authorization step
// answered and the id its effect is stored under (service.EffectID), and
// does the act in effect. The price is held before effect runs (PayFor:
// plan, balance, daily cap; an account that cannot pay gets no effect)
// and charged as TOOL_USAGE once it succeeded.
//
// The charge is keyed by the call ctx carries (service.Call): an agent's
// "<turn>/tool/<step>/<index>" (run_id the turn), or a client's
// idempotency key (service.RequestCall), so the same call made again
// pays nothing more — its effect must then be found by effectID, not
// repeated. Without a call the act is one of its own: keyed and run_id-ed
// by effectID.
func (s *Service) PayForAct(ctx context.Context, ac service.AuthorizedCompany, act, effectID string, effect func(context.Context) error) error {
	return s.PayFor(ctx, ac.Scope.Conglomerate(), ActUsage(ctx, ac.ID, act, effectID), effect)
}

// ActUsage is the charge of one billable act (see PayForAct).
func ActUsage(ctx context.Context, companyID, act, effectID string) Usage {
	u := Usage{CompanyID: companyID, Type: models.EntryToolUsage, Credits: ToolCredits(act), RunID: effectID, Key: act + "/" + effectID}
	if call, ok := service.CallOf(ctx); ok {
		u.Key = call.Key
		if call.RunID != "" {
			u.RunID = call.RunID
		}
	}
	return u
}

// ReleaseRun frees what the run's calls still hold (its turn ended).
func (s *Service) ReleaseRun(ctx context.Context, scope store.ConglomerateScope, runID string) error {
	return s.store.Billing().ReleaseRunCredits(ctx, scope, runID)
}
