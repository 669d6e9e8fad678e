package founding_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// connector is ctx acting as its user through an OAuth client (the
// connector's principal).
func connector(t testing.TB, ctx context.Context, clientID string) context.Context {
	p, ok := service.PrincipalFrom(ctx)
	require.True(t, ok)
	p.Credential, p.ClientID = service.CredentialOAuthAccess, clientID
	return service.WithPrincipal(context.Background(), p)
}

func codeOf(t testing.TB, err error) models.ErrorCode {
	t.Helper()
	var de *models.Error
	require.True(t, errors.As(err, &de), "not a domain error: %v", err)
	return de.Code
}

func welcomeEntries(t testing.TB, e *servicetest.Env, cong string) int64 {
	var n int64
	require.NoError(t, e.SQL.QueryRow("SELECT COUNT(*) FROM credit_ledger_entries WHERE type = 'GRANT_WELCOME' AND conglomerate_id = "+ph(e, 1), cong).Scan(&n))
	return n
}

func ph(e *servicetest.Env, n int) string {
	if e.Placeholder == "$" {
		return "$" + string(rune('0'+n))
	}
	return "?"
}

func TestCreateBusinessInputErrors(t *testing.T) {
	e := servicetest.New(t)
	ada, _ := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	cases := []struct {
		in    founding.CreateBusinessInput
		code  models.ErrorCode
		field string
	}{
		{founding.CreateBusinessInput{Idea: strings.Repeat("a", founding.MaxIdeaLen+1)}, models.CodeInvalidArgument, "idea"},
		{founding.CreateBusinessInput{Idea: "   "}, models.CodeInvalidArgument, "idea"},
		{founding.CreateBusinessInput{Idea: "bad\x00idea"}, models.CodeInvalidArgument, "idea"},
		{founding.CreateBusinessInput{Idea: "Sell maps to hikers", Handle: "maps"}, models.CodeInvalidArgument, "handle"},
		{founding.CreateBusinessInput{Idea: "Sell maps to hikers", Name: "Maps", Handle: "Not A Handle"}, models.CodeInvalidArgument, "handle"},
		{founding.CreateBusinessInput{Idea: "Sell maps", Name: "two\nlines"}, models.CodeInvalidArgument, "name"},
		{founding.CreateBusinessInput{Idea: "!!! ??? ***"}, models.CodeIdeaNotAllowed, ""},
	}
	for _, c := range cases {
		_, err := e.Svc.Founding.CreateBusiness(ctx, c.in)
		require.Error(t, err, "%+v", c.in)
		var de *models.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, c.code, de.Code, "%+v", c.in)
		assert.Equal(t, c.field, de.Field, "%+v", c.in)
	}
	// An idea of exactly the limit is fine.
	_, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "maps " + strings.Repeat("a", founding.MaxIdeaLen-5)})
	require.NoError(t, err)
	assert.EqualValues(t, 0, mustCount(t, e, "SELECT COUNT(*) FROM companies WHERE name = ''"))

	// The operator's deny list refuses an idea by a whole word.
	svc := e.NewServices(t, usecases.Options{FoundingLimits: founding.Limits{DenyTerms: []string{"Casino"}}})
	_, err = svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "An online casino for friends"})
	assert.Equal(t, models.CodeIdeaNotAllowed, codeOf(t, err))
	_, err = svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Casinos history walking tours"})
	assert.NoError(t, err, "only whole words are denied")
}

func mustCount(t testing.TB, e *servicetest.Env, q string) int64 {
	var n int64
	require.NoError(t, e.SQL.QueryRow(q).Scan(&n))
	return n
}

func TestCreateBusinessGrantsWelcomeAndIsIdempotent(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	in := founding.CreateBusinessInput{Idea: "Bread by subscription for offices", Paused: true}
	res, err := e.Svc.Founding.CreateBusiness(ctx, in)
	require.NoError(t, err)
	assert.True(t, res.WelcomeCreditsGranted)
	assert.Equal(t, "Bread By Subscription For", res.Business.Name)
	assert.Equal(t, "bread-by-subscription-for", res.Business.Handle)
	assert.Equal(t, models.CompanyPaused, res.Business.Status)
	assert.Equal(t, models.CurrentCompanyGeneration, res.Business.Generation)
	assert.Equal(t, founding.FirstPassProvisioning, res.FirstPass.Status)
	st, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.EqualValues(t, billing.WelcomeCredits, st.Balance)

	// The same idea by the same client within ten minutes: the same
	// business, nothing granted again.
	e.Clock.Advance(9 * time.Minute)
	again, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: in.Idea, Name: "Other name"})
	require.NoError(t, err)
	assert.Equal(t, res.Business.ID, again.Business.ID)
	assert.False(t, again.WelcomeCreditsGranted)
	assert.Equal(t, founding.FirstPassProvisioning, again.FirstPass.Status)

	// Another client, or the window passed: a new business.
	other, err := e.Svc.Founding.CreateBusiness(connector(t, ada, "client-2"), in)
	require.NoError(t, err)
	assert.NotEqual(t, res.Business.ID, other.Business.ID)
	assert.False(t, other.WelcomeCreditsGranted, "welcome credits once per account")
	e.Clock.Advance(2 * time.Minute)
	later, err := e.Svc.Founding.CreateBusiness(ctx, in)
	require.NoError(t, err)
	assert.NotEqual(t, res.Business.ID, later.Business.ID)
	assert.NotEqual(t, other.Business.ID, later.Business.ID)
	assert.EqualValues(t, 1, welcomeEntries(t, e, cong))
}

func TestCreateBusinessConcurrentGrantsWelcomeOnce(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	const n = 6
	var wg sync.WaitGroup
	results := make([]founding.CreateBusinessResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idea := "Idea number " + string(rune('a'+i)) + " for cyclists"
			if i >= n/2 {
				idea = "The same idea for every retry"
			}
			results[i], errs[i] = e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: idea})
		}()
	}
	wg.Wait()
	granted := 0
	same := map[string]bool{}
	for i := range n {
		require.NoError(t, errs[i])
		if results[i].WelcomeCreditsGranted {
			granted++
		}
		if i >= n/2 {
			same[results[i].Business.ID] = true
		}
	}
	assert.Equal(t, 1, granted)
	assert.Len(t, same, 1, "retries of one idea share one business")
	assert.EqualValues(t, 1, welcomeEntries(t, e, cong))
	st, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.EqualValues(t, billing.WelcomeCredits, st.Balance)
	live, err := e.Svc.ListCompanies(ada, cong)
	require.NoError(t, err)
	assert.Len(t, live, n/2+1)
}

func TestCreateBusinessGatesInOrder(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	limited := e.NewServices(t, usecases.Options{FoundingLimits: founding.Limits{BusinessLimit: 1}})

	first, err := limited.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Maps for hikers and families"})
	require.NoError(t, err)
	// Spend the balance under 12.
	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), first.Business.ID, "", models.EntryToolUsage, 10)
	require.NoError(t, err)

	// All three gates fail: the plan answers first.
	e.Clock.Advance(4 * 24 * time.Hour)
	_, err = limited.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	assert.Equal(t, models.CodePlanExpired, codeOf(t, err))
	e.Clock.Advance(-4 * 24 * time.Hour)
	// Then the business limit, before the credits.
	_, err = limited.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	assert.Equal(t, models.CodeBusinessLimitReached, codeOf(t, err))
	// Then the credits, with the numbers.
	_, err = e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeInsufficientCredits, de.Code)
	assert.EqualValues(t, 12, de.Extra["needed"])
	assert.EqualValues(t, 5, de.Extra["balance"])

	// The platform's cap.
	capped := e.NewServices(t, usecases.Options{FoundingLimits: founding.Limits{PlatformCompanies: 1}})
	_, err = capped.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeBusinessLimitReached, de.Code)
	assert.Equal(t, "platform", de.Extra["scope"])
}

// TestBusinessLimitMessageNamesTheLimit: an account over its limit (the
// limit was lowered after it founded its businesses) is told how many it
// has and what the limit is — not its count as the limit.
func TestBusinessLimitMessageNamesTheLimit(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	for _, name := range []string{"Ada One", "Ada Two"} {
		_, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: name})
		require.NoError(t, err)
	}
	limited := e.NewServices(t, usecases.Options{FoundingLimits: founding.Limits{BusinessLimit: 1}})
	_, err := limited.Founding.CreateBusiness(connector(t, ada, "client-1"), founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeBusinessLimitReached, de.Code)
	assert.Equal(t, "This account has 2 businesses and may have at most 1; archive one to start another.", de.Detail)
	assert.EqualValues(t, 1, de.Extra["limit"])
	assert.EqualValues(t, 2, de.Extra["count"])
}

func TestRefusedStartKeepsWelcomeCredits(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	// The plan refuses: nothing granted.
	e.Clock.Advance(4 * 24 * time.Hour)
	_, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Maps for hikers and families"})
	assert.Equal(t, models.CodePlanExpired, codeOf(t, err))
	e.Clock.Advance(-4 * 24 * time.Hour)
	assert.EqualValues(t, 0, welcomeEntries(t, e, cong))

	// A taken handle refuses: the transaction that would grant them rolls
	// back. (Another account holds it: a start of ada's own would have
	// granted her welcome credits.)
	bob, bobCong := e.User(t, "bob@example.com")
	_, err = e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Taken", Handle: "taken"})
	require.NoError(t, err)
	_, err = e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Maps for hikers", Name: "Maps", Handle: "taken"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeHandleTaken, de.Code)
	assert.Equal(t, "taken-2", de.Extra["suggested_handle"])
	assert.EqualValues(t, 0, welcomeEntries(t, e, cong))

	// The next start that goes through gets them.
	res, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Maps for hikers", Name: "Maps", Handle: "maps"})
	require.NoError(t, err)
	assert.True(t, res.WelcomeCreditsGranted)
	assert.Equal(t, "maps", res.Business.Handle)
}

func TestStartFirstPassStates(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := connector(t, ada, "client-1")
	res, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Maps for hikers and families"})
	require.NoError(t, err)
	fp, err := e.Svc.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	assert.Equal(t, founding.FirstPassProvisioning, fp.Status)

	setReady(t, e, res.Business.ID)
	// Ready, but this server has no Temporal: not_started with the reason.
	fp, err = e.Svc.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	assert.Equal(t, founding.FirstPassNotStarted, fp.Status)
	assert.Equal(t, models.CodeUpstreamUnavailable, fp.Error)

	// Too few credits: needed is the turn's minimum.
	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), res.Business.ID, "", models.EntryToolUsage, 14)
	require.NoError(t, err)
	fp, err = e.Svc.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	assert.Equal(t, founding.FirstPassNotStarted, fp.Status)
	assert.Equal(t, models.CodeInsufficientCredits, fp.Error)
	require.NotNil(t, fp.Needed)
	assert.EqualValues(t, billing.MinCreditsToStartTurn, *fp.Needed)

	// With its founding plan, nothing starts.
	_, _, err = e.Svc.Documents.Upsert(ada, res.Business.ID, models.DocFoundingPlan, documents.UpsertInput{Content: "# Plan"})
	require.NoError(t, err)
	fp, err = e.Svc.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	assert.Equal(t, founding.FirstPassSkipped, fp.Status)

	// Another account's business is forbidden, a missing one not found.
	bob, _ := e.User(t, "bob@example.com")
	_, err = e.Svc.Founding.StartFirstPass(connector(t, bob, "client-1"), res.Business.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	_, err = e.Svc.Founding.StartFirstPass(ctx, "00000000-0000-4000-8000-000000000000")
	assert.Equal(t, models.CodeNotFound, codeOf(t, err))
}

func setReady(t testing.TB, e *servicetest.Env, companyID string) {
	ctx := context.Background()
	scope, err := e.Store.SystemCompanyScope(ctx, companyID)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, e.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: companyID, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
}
