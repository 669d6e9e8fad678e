package companies_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/store"
)

// startWorld is an account (ada) whose use cases start businesses under
// the given limits.
type startWorld struct {
	e    *servicetest.Env
	svc  servicetest.Services
	ada  context.Context
	cong string
}

func newStartWorld(t *testing.T, limits founding.Limits) startWorld {
	t.Helper()
	e := servicetest.New(t)
	w := startWorld{e: e, svc: e.NewServices(t, usecases.Options{FoundingLimits: limits})}
	w.ada, w.cong = e.User(t, "ada@example.com")
	return w
}

func (w startWorld) view(t *testing.T) service.ConglomerateView {
	t.Helper()
	v, err := w.svc.Files.Core().AuthorizeConglomerate(w.ada, w.cong)
	require.NoError(t, err)
	return v
}

func (w startWorld) start(t *testing.T, in companies.StartBusinessInput) (companies.StartedBusiness, error) {
	t.Helper()
	return w.svc.StartBusiness(w.ada, w.view(t), in)
}

func (w startWorld) count(t *testing.T, q string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, w.e.SQL.QueryRow(w.e.Rebind(q), args...).Scan(&n))
	return n
}

func (w startWorld) welcomes(t *testing.T) int64 {
	return w.count(t, "SELECT COUNT(*) FROM credit_ledger_entries WHERE type = 'GRANT_WELCOME' AND conglomerate_id = ?", w.cong)
}

func (w startWorld) companies(t *testing.T) int64 {
	return w.count(t, "SELECT COUNT(*) FROM companies WHERE conglomerate_id = ?", w.cong)
}

func (w startWorld) balance(t *testing.T) int64 {
	t.Helper()
	st, err := w.e.Svc.Credits(w.ada, w.cong)
	require.NoError(t, err)
	return st.Balance
}

func domainErr(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.True(t, errors.As(err, &de), "not a domain error: %v", err)
	return de
}

// TestStartBusinessGatesInOrder: the one business start checks the input,
// then the plan, the account's business limit, the platform's cap and the
// credits (counting the welcome credits), in that order; a refused start
// writes nothing, and a start that goes through writes the company, its
// provisioning intent and the welcome credits.
func TestStartBusinessGatesInOrder(t *testing.T) {
	type fails struct{ plan, limit, platform, credits bool }
	cases := []struct {
		name  string
		fails fails
		in    companies.StartBusinessInput
		code  models.ErrorCode
		field string
		scope string
	}{
		{name: "every gate fails: the plan answers", fails: fails{plan: true, limit: true, platform: true, credits: true}, code: models.CodePlanExpired},
		{name: "then the account's limit", fails: fails{limit: true, platform: true, credits: true}, code: models.CodeBusinessLimitReached, scope: "account"},
		{name: "then the platform's cap", fails: fails{platform: true, credits: true}, code: models.CodeBusinessLimitReached, scope: "platform"},
		{name: "then the credits", fails: fails{credits: true}, code: models.CodeInsufficientCredits},
		{name: "the input before every gate: a blank name", fails: fails{plan: true, limit: true, platform: true, credits: true},
			in: companies.StartBusinessInput{Name: "   "}, code: models.CodeInvalidArgument, field: "name"},
		{name: "the input before every gate: not a handle", fails: fails{plan: true, limit: true, platform: true, credits: true},
			in: companies.StartBusinessInput{Name: "Maps", Handle: "Not A Handle", HandleChosen: true}, code: models.CodeInvalidArgument, field: "handle"},
		{name: "a new account with no credits: the welcome credits count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var limits founding.Limits
			if c.fails.limit {
				limits.BusinessLimit = 1
			}
			if c.fails.platform {
				limits.PlatformCompanies = 1
			}
			w := newStartWorld(t, limits)
			ctx := context.Background()
			cong := w.e.Store.SystemConglomerateScope(w.cong)
			if c.fails.limit {
				w.e.SeedCompany(t, w.ada, companies.CompanyInput{Name: "Ada First"})
			} else if c.fails.platform {
				bob, _ := w.e.User(t, "bob@example.com")
				w.e.SeedCompany(t, bob, companies.CompanyInput{Name: "Bob First"})
			}
			if c.fails.credits {
				// The welcome credits were had and mostly spent: 11 left.
				granted, err := w.e.Svc.GrantWelcomeCredits(ctx, cong)
				require.NoError(t, err)
				require.True(t, granted)
				_, err = w.e.Svc.Spend(ctx, cong, "", "run-1", models.EntryTokenUsagePartial, 4)
				require.NoError(t, err)
			}
			if c.fails.plan {
				w.e.Clock.Advance(service.TrialLength + time.Minute)
			}
			welcomes, cos, balance := w.welcomes(t), w.companies(t), w.balance(t)
			in := c.in
			if in.Name == "" {
				in.Name = "Trail Maps"
			}

			started, err := w.start(t, in)

			if c.code == "" {
				require.NoError(t, err)
				assert.True(t, started.WelcomeCreditsGranted)
				assert.Equal(t, "trail-maps", started.Company.Handle)
				assert.Equal(t, models.CompanyActive, started.Company.Status)
				assert.EqualValues(t, billing.WelcomeCredits, w.balance(t))
				assert.EqualValues(t, 1, w.welcomes(t))
				assert.EqualValues(t, 1, w.count(t, "SELECT COUNT(*) FROM company_provisioning WHERE company_id = ?", started.Company.ID),
					"the provisioning intent is recorded with the company")
				return
			}
			de := domainErr(t, err)
			assert.Equal(t, c.code, de.Code, de.Detail)
			assert.Equal(t, c.field, de.Field)
			if c.scope != "" {
				assert.Equal(t, c.scope, de.Extra["scope"])
			}
			switch c.code {
			case models.CodeInsufficientCredits:
				assert.Equal(t, "This needs 12 credits but the account has 11; add at least 1 credits or upgrade the plan.", de.Detail)
				assert.EqualValues(t, billing.MinCreditsToStart, de.Extra["needed"])
				assert.EqualValues(t, 11, de.Extra["balance"])
			case models.CodeBusinessLimitReached:
				if c.scope == "account" {
					assert.Equal(t, "This account has 1 businesses and may have at most 1; archive one to start another.", de.Detail)
					assert.EqualValues(t, 1, de.Extra["limit"])
					assert.EqualValues(t, 1, de.Extra["count"])
				}
			}
			assert.Equal(t, welcomes, w.welcomes(t), "a refused start grants nothing")
			assert.Equal(t, cos, w.companies(t), "a refused start creates nothing")
			assert.Equal(t, balance, w.balance(t))
		})
	}
}

// TestStartBusinessRefusedByThePlanKeepsTheWelcomeCredits: a start the
// plan refuses does not burn the one-time welcome credits; the first start
// that goes through grants them, and no later one.
func TestStartBusinessRefusedByThePlanKeepsTheWelcomeCredits(t *testing.T) {
	w := newStartWorld(t, founding.Limits{})
	w.e.Clock.Advance(service.TrialLength + time.Minute)
	started, err := w.start(t, companies.StartBusinessInput{Name: "Late"})
	assert.True(t, models.IsCode(err, models.CodePlanExpired), "%v", err)
	assert.False(t, started.WelcomeCreditsGranted)
	assert.EqualValues(t, 0, w.balance(t), "nothing granted by a refused start")

	require.NoError(t, w.e.Store.Billing().SetSubscription(context.Background(), w.cong, "cus_w", "sub_w", models.PlanFounder, models.SubscriptionActive, nil))
	started, err = w.start(t, companies.StartBusinessInput{Name: "Founder"})
	require.NoError(t, err)
	assert.True(t, started.WelcomeCreditsGranted, "the first start that goes through grants them")
	started, err = w.start(t, companies.StartBusinessInput{Name: "Second"})
	require.NoError(t, err)
	assert.False(t, started.WelcomeCreditsGranted, "once per account")
	assert.EqualValues(t, billing.WelcomeCredits, w.balance(t))
	assert.EqualValues(t, 1, w.welcomes(t))
}

// TestStartBusinessHandles: a chosen handle that is taken is handle_taken
// with a free suggestion (nothing written); a derived or proposed one
// takes the next free handle; a duplicate key another start stored is
// store.ErrCreateKeyUsed.
func TestStartBusinessHandles(t *testing.T) {
	w := newStartWorld(t, founding.Limits{})
	bob, _ := w.e.User(t, "bob@example.com")
	w.e.SeedCompany(t, bob, companies.CompanyInput{Name: "Maps", Handle: "maps"})

	_, err := w.start(t, companies.StartBusinessInput{Name: "Maps", Handle: "maps", HandleChosen: true})
	de := domainErr(t, err)
	assert.Equal(t, models.CodeHandleTaken, de.Code)
	assert.Equal(t, "handle", de.Field)
	assert.Equal(t, "maps-2", de.Extra["suggested_handle"])
	assert.EqualValues(t, 0, w.companies(t))
	assert.EqualValues(t, 0, w.welcomes(t), "the transaction that would grant them rolled back")

	derived, err := w.start(t, companies.StartBusinessInput{Name: "Maps"})
	require.NoError(t, err)
	assert.Equal(t, "maps-2", derived.Company.Handle, "derived from the name, then the next free one")
	proposed, err := w.start(t, companies.StartBusinessInput{Name: "Hiking Maps", Handle: "maps"})
	require.NoError(t, err)
	assert.Equal(t, "maps-3", proposed.Company.Handle, "a proposal that is taken takes the next free one")

	now := w.e.Clock.Now()
	key := &models.CompanyCreateKey{KeyHash: "k1", ConglomerateID: w.cong, Fingerprint: "f", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	first, err := w.start(t, companies.StartBusinessInput{Name: "Keyed", Key: key})
	require.NoError(t, err)
	_, err = w.start(t, companies.StartBusinessInput{Name: "Keyed Again", Key: key})
	assert.ErrorIs(t, err, store.ErrCreateKeyUsed)
	// The same request again (same handle, same key): its company is
	// answered by the caller, not a handle_taken.
	_, err = w.start(t, companies.StartBusinessInput{Name: "Keyed", Key: key})
	assert.ErrorIs(t, err, store.ErrCreateKeyUsed)
	assert.EqualValues(t, 3, w.companies(t), "%s stays the only keyed one", first.Company.ID)
}

// TestStartBusinessWritesWithTheCompany: what the caller writes with the
// company (the interview's founding plan and its end) commits with it, or
// rolls it back — the welcome credits too.
func TestStartBusinessWritesWithTheCompany(t *testing.T) {
	w := newStartWorld(t, founding.Limits{})
	boom := errors.New("the interview moved on")
	_, err := w.start(t, companies.StartBusinessInput{Name: "Maps", With: func(*store.Store, store.CompanyScope, models.Company) error { return boom }})
	assert.ErrorIs(t, err, boom)
	assert.EqualValues(t, 0, w.companies(t))
	assert.EqualValues(t, 0, w.welcomes(t))
	assert.EqualValues(t, 0, w.count(t, "SELECT COUNT(*) FROM company_provisioning"))

	started, err := w.start(t, companies.StartBusinessInput{Name: "Maps", With: func(tx *store.Store, sc store.CompanyScope, c models.Company) error {
		_, _, err := tx.Companies().PutDocument(context.Background(), sc, models.Document{DocumentType: models.DocFoundingPlan, Title: "Plan", Content: "# Plan for " + c.Name,
			Visibility: models.DocumentVisible, UpdatedBy: models.ActorSystem}, models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem})
		return err
	}})
	require.NoError(t, err)
	assert.True(t, started.WelcomeCreditsGranted)
	doc, err := w.e.Svc.Documents.Get(w.ada, started.Company.ID, models.DocFoundingPlan)
	require.NoError(t, err)
	assert.Equal(t, "# Plan for Maps", doc.Content)
}

// TestConcurrentStartsHoldTheLimitAndGrantWelcomeOnce: starts racing in
// one account pass the business limit and the welcome grant one at a
// time (the account's lock): exactly the limit's number go through, the
// others are refused, and the welcome credits are granted once.
func TestConcurrentStartsHoldTheLimitAndGrantWelcomeOnce(t *testing.T) {
	const limit, n = 3, 8
	w := newStartWorld(t, founding.Limits{BusinessLimit: limit})
	v := w.view(t)
	var wg sync.WaitGroup
	results := make([]companies.StartedBusiness, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = w.svc.StartBusiness(w.ada, v, companies.StartBusinessInput{Name: "Racer " + string(rune('a'+i))})
		})
	}
	wg.Wait()
	ok, refused, welcomed := 0, 0, 0
	for i := range n {
		switch {
		case errs[i] == nil:
			ok++
			if results[i].WelcomeCreditsGranted {
				welcomed++
			}
		case models.IsCode(errs[i], models.CodeBusinessLimitReached):
			refused++
		default:
			t.Errorf("start %d: %v", i, errs[i])
		}
	}
	assert.Equal(t, limit, ok)
	assert.Equal(t, n-limit, refused)
	assert.Equal(t, 1, welcomed)
	assert.EqualValues(t, limit, w.companies(t))
	assert.EqualValues(t, 1, w.welcomes(t))
	assert.EqualValues(t, billing.WelcomeCredits, w.balance(t))
}
