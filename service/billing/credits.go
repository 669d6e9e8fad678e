package billing

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/observability"
	"holdco/store"
)

// Credit rules of the plan.
const (
	WelcomeCredits    = 15 // granted once per account
	MinCreditsToStart = 12 // to start a business
)

// dayStart is the start of the UTC day the daily cap counts.
func dayStart(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// CreditState is a conglomerate's balance and today's spend.
type CreditState struct {
	Balance        int64
	SpentToday     int64
	DailyCreditCap *int64
}

// Spend records credits used by a company's run. It is refused with
// insufficient_credits (exact numbers and links) when the balance cannot
// cover it, and with rate_limited when it would pass the daily cap.
//
// It is a rule, not a use case: the caller passes the scope its own
// authorization step made (a request's AuthorizeConglomerate, the worker's
// system scope).
func (s *Service) Spend(ctx context.Context, scope store.ConglomerateScope, companyID, runID string, typ models.LedgerEntryType, credits int64) (CreditState, error) {
	st, _, err := s.spend(ctx, scope, Usage{CompanyID: companyID, RunID: runID, Type: typ, Credits: credits}, false)
	return st, err
}

// Usage is one charge of a run: a model call (TOKEN_USAGE_PARTIAL) or a
// billable tool call (TOOL_USAGE).
type Usage struct {
	CompanyID string
	RunID     string
	Type      models.LedgerEntryType
	Credits   int64
	// Key names the charge (e.g. "<run>/model/3"): a second SpendOnce with
	// the same key charges nothing, so an activity retried after a crash
	// never pays a call twice.
	Key string
}

// SpendOnce is Spend made idempotent by u.Key. charged is false when the
// key was charged before (the state is then the current one).
func (s *Service) SpendOnce(ctx context.Context, scope store.ConglomerateScope, u Usage) (st CreditState, charged bool, err error) {
	if u.Key == "" {
		return CreditState{}, false, models.Errorf(models.CodeInvalidArgument, "A charge needs its key.").WithField("key")
	}
	st, n, err := s.spend(ctx, scope, u, false)
	return st, n > 0, err
}

// SettleOnce charges work already done whose price was held before it
// ran (a model call): as SpendOnce, but when the balance or the daily cap
// cannot take all of u.Credits it takes what they allow, and always what
// u.Key's live hold covers (the cap was checked for the hold when it was
// made, and lowering it meanwhile does not make the work free), and then
// answers insufficient_credits or rate_limited as SpendOnce does.
// charged is what this call took: 0 when the key was charged before or
// nothing could be taken.
func (s *Service) SettleOnce(ctx context.Context, scope store.ConglomerateScope, u Usage) (st CreditState, charged int64, err error) {
	if u.Key == "" {
		return CreditState{}, 0, models.Errorf(models.CodeInvalidArgument, "A charge needs its key.").WithField("key")
	}
	return s.spend(ctx, scope, u, true)
}

// chargeNamespace derives ledger entry ids from charge keys.
var chargeNamespace = uuid.MustParse("0c2c3f4e-7d7b-4c55-9a43-6f1f3b7f2a10")

// chargeID is the ledger entry id of a keyed charge or grant.
func chargeID(conglomerateID, key string) string {
	return uuid.NewSHA1(chargeNamespace, []byte(conglomerateID+"\x00"+key)).String()
}

// spend charges u (partial: what the account allows of it, SettleOnce)
// and returns what it took.
func (s *Service) spend(ctx context.Context, scope store.ConglomerateScope, u Usage, partial bool) (CreditState, int64, error) {
	conglomerateID := scope.ID()
	if !u.Type.Spends() || u.Credits <= 0 {
		return CreditState{}, 0, models.Errorf(models.CodeInvalidArgument, "A spend is a positive number of credits of a usage type.").WithField("credits")
	}
	cong, err := s.store.Identity().GetConglomerate(ctx, conglomerateID)
	if err != nil {
		return CreditState{}, 0, err
	}
	e := models.CreditLedgerEntry{ConglomerateID: conglomerateID, Type: u.Type, Amount: -u.Credits, CreatedAt: s.now()}
	if u.Key != "" {
		e.ID = chargeID(conglomerateID, u.Key)
	}
	if u.CompanyID != "" {
		e.CompanyID = &u.CompanyID
	}
	if u.RunID != "" {
		e.RunID = &u.RunID
	}
	apply := s.store.Billing().ApplyCreditEntry
	if partial {
		apply = s.store.Billing().SettleCreditEntry
	}
	out, err := apply(ctx, scope, e, cong.DailyCreditCap, dayStart(s.now()))
	st := CreditState{Balance: out.Balance, SpentToday: out.SpentToday, DailyCreditCap: cong.DailyCreditCap}
	if out.Charged > 0 {
		observability.CreditsSpent(string(u.Type), out.Charged)
		s.afterSpend(ctx, cong, st)
	}
	switch {
	case errors.Is(err, store.ErrInsufficientCredits):
		// What calls in progress hold is not there to spend.
		st.Balance = out.Balance - out.Held
		return st, out.Charged, s.InsufficientCredits(cong, st.Balance, u.Credits-out.Charged)
	case errors.Is(err, store.ErrDailyCapReached):
		return st, out.Charged, models.Errorf(models.CodeRateLimited, "The daily credit cap of %d credits is reached: %d spent today (UTC), %d more needed. Raise the cap or wait until midnight UTC.",
			*cong.DailyCreditCap, out.SpentToday, u.Credits-out.Charged).With("spent_today", out.SpentToday).With("daily_credit_cap", *cong.DailyCreditCap).With("needed", u.Credits-out.Charged)
	case u.Key != "" && errors.Is(err, models.ErrDuplicate):
		cur, err := s.store.Billing().CreditBalance(ctx, scope, dayStart(s.now()))
		return CreditState{Balance: cur.Balance, SpentToday: cur.SpentToday, DailyCreditCap: cong.DailyCreditCap}, 0, err
	case err != nil:
		return st, 0, err
	}
	return st, out.Charged, nil
}

// ChargedCredits is what a keyed charge (SpendOnce) took, 0 when the key
// was never charged: a caller that finds its charge made before (charged
// false) records what was really charged, never what it meant to charge
// now.
func (s *Service) ChargedCredits(ctx context.Context, scope store.ConglomerateScope, key string) (int64, error) {
	amount, err := s.store.Billing().CreditEntryAmount(ctx, scope, chargeID(scope.ID(), key))
	if errors.Is(err, models.ErrNotFound) {
		return 0, nil
	}
	return -amount, err
}

// GrantCredits adds credits (top-ups, plan grants, refunds, adjustments)
// to the scope's conglomerate; like Spend, a rule for callers that hold a
// scope.
func (s *Service) GrantCredits(ctx context.Context, scope store.ConglomerateScope, typ models.LedgerEntryType, credits int64, reference string) (CreditState, error) {
	if typ.Spends() || !typ.Valid() || credits == 0 {
		return CreditState{}, models.Errorf(models.CodeInvalidArgument, "A grant is a non-zero number of credits of a grant type.").WithField("credits")
	}
	out, err := s.store.Billing().ApplyCreditEntry(ctx, scope, models.CreditLedgerEntry{Type: typ, Amount: credits, Reference: reference, CreatedAt: s.now()}, nil, dayStart(s.now()))
	if errors.Is(err, store.ErrInsufficientCredits) { // a negative adjustment below zero
		return CreditState{Balance: out.Balance}, models.Errorf(models.CodeConflict, "The adjustment would take the balance (%d) below zero.", out.Balance)
	}
	if errors.Is(err, models.ErrDuplicate) { // a paid grant's reference is used once
		return CreditState{Balance: out.Balance}, models.Errorf(models.CodeConflict, "Credits for %q were granted already.", reference).With("reason", "already_granted")
	}
	if err == nil && credits > 0 {
		observability.CreditsGranted(string(typ), credits)
		s.afterGrant(ctx, out.Woken)
	}
	return CreditState{Balance: out.Balance, SpentToday: out.SpentToday}, err
}

// GrantWelcomeCredits grants the 15 welcome credits unless the account
// already had them; exactly once even under concurrent calls (a unique
// index decides, not a check before the insert).
func (s *Service) GrantWelcomeCredits(ctx context.Context, scope store.ConglomerateScope) (bool, error) {
	return s.GrantWelcomeCreditsIn(ctx, s.store, scope)
}

// GrantWelcomeCreditsIn is GrantWelcomeCredits on the caller's transaction
// (tx from store.InTx), so a business start commits the company and the
// grant together, or neither.
func (s *Service) GrantWelcomeCreditsIn(ctx context.Context, tx *store.Store, scope store.ConglomerateScope) (bool, error) {
	_, err := tx.Billing().ApplyCreditEntry(ctx, scope, models.CreditLedgerEntry{Type: models.EntryGrantWelcome,
		Amount: WelcomeCredits, Reference: "welcome credits", CreatedAt: s.now()}, nil, dayStart(s.now()))
	if errors.Is(err, models.ErrDuplicate) {
		return false, nil
	}
	if err == nil {
		observability.CreditsGranted(string(models.EntryGrantWelcome), WelcomeCredits)
	}
	return err == nil, err
}

// Credits reports the balance and today's spend of a conglomerate the
// caller belongs to.
func (s *Service) Credits(ctx context.Context, conglomerateID string) (CreditState, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return CreditState{}, err
	}
	out, err := s.store.Billing().CreditBalance(ctx, v.Scope, dayStart(s.now()))
	return CreditState{Balance: out.Balance, SpentToday: out.SpentToday, DailyCreditCap: v.DailyCreditCap}, err
}

// LedgerPage is one page of the grouped credit ledger.
type LedgerPage struct {
	Groups  []models.CreditLedgerGroup
	Total   int64
	Balance int64
}

// CreditLedger returns a page of the ledger, newest first: usage entries of
// one run are summed per type; legacy TOOL_USAGE rows without a run and
// every other entry stand alone. offset ≥ 0, limit 1–100.
func (s *Service) CreditLedger(ctx context.Context, conglomerateID string, offset, limit int) (LedgerPage, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return LedgerPage{}, err
	}
	if offset < 0 {
		return LedgerPage{}, models.Errorf(models.CodeInvalidArgument, "offset must be 0 or more.").WithField("offset")
	}
	if limit < 1 || limit > 100 {
		return LedgerPage{}, models.Errorf(models.CodeInvalidArgument, "limit must be from 1 to 100.").WithField("limit")
	}
	groups, total, err := s.store.Billing().CreditLedgerPage(ctx, v.Scope, offset, limit)
	if err != nil {
		return LedgerPage{}, err
	}
	bal, err := s.store.Billing().CreditBalance(ctx, v.Scope, dayStart(s.now()))
	return LedgerPage{Groups: groups, Total: total, Balance: bal.Balance}, err
}

// Model call prices: a call costs one credit per started InputTokensPerCredit
// input tokens plus one per started OutputTokensPerCredit output tokens,
// at least one credit.
const (
	InputTokensPerCredit  = 4000
	OutputTokensPerCredit = 1000
	// MinCreditsToStartTurn is the balance a message needs to start a
	// turn (a short turn's calls cost about that much).
	MinCreditsToStartTurn = 3
)

// ModelCallCredits is the price of a model call with this usage.
func ModelCallCredits(u models.ModelUsage) int64 {
	c := ceilDiv(max(u.InputTokens, 0), InputTokensPerCredit) + ceilDiv(max(u.OutputTokens, 0), OutputTokensPerCredit)
	return max(c, 1)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
