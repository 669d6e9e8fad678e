package companies_test

import (
	"context"
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
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

func TestCompanyLifecycleAndOwnership(t *testing.T) {
	e := servicetest.New(t)
	ada, adaCong := e.User(t, "ada@example.com")
	bob, bobCong := e.User(t, "bob@example.com")

	c, err := e.Svc.CreateCompany(ada, adaCong, companies.CompanyInput{Name: "Crème Brûlée Co.", Idea: "desserts"})
	require.NoError(t, err)
	assert.Equal(t, "creme-brulee-co", c.Handle, "derived from the name")
	assert.Equal(t, models.CompanyActive, c.Status)

	// A derived handle that is taken takes the next free one; an explicit
	// one is refused with a suggestion.
	c2, err := e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Creme brulee co"})
	require.NoError(t, err)
	assert.Equal(t, "creme-brulee-co-2", c2.Handle)
	_, err = e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "x", Handle: "creme-brulee-co"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeHandleTaken, de.Code)
	assert.Equal(t, "creme-brulee-co-3", de.Extra["suggested_handle"])
	_, err = e.Svc.CreateCompany(ada, bobCong, companies.CompanyInput{Name: "intruder"})
	assert.True(t, models.IsCode(err, models.CodeForbidden), "creating in another account")

	_, err = e.Svc.GetCompany(bob, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.GetCompany(ada, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	paused := models.CompanyPaused
	mission := "Sell desserts"
	c, err = e.Svc.UpdateCompany(ada, c.ID, companies.CompanyUpdate{Status: &paused, Mission: &mission})
	require.NoError(t, err)
	assert.Equal(t, models.CompanyPaused, c.Status)
	assert.Equal(t, "desserts", c.Idea, "omitted fields stay")
	archived := models.CompanyArchived
	_, err = e.Svc.UpdateCompany(ada, c.ID, companies.CompanyUpdate{Status: &archived})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "archive is DELETE")

	require.NoError(t, e.Svc.ArchiveCompany(ada, c.ID))
	require.NoError(t, e.Svc.ArchiveCompany(ada, c.ID), "repeating is a no-op")
	_, err = e.Svc.GetCompany(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeNotFound), "archived companies have no pages")
	list, err := e.Svc.ListCompanies(ada, adaCong)
	require.NoError(t, err)
	assert.Empty(t, list)
	arch, err := e.Svc.ListArchivedCompanies(ada, adaCong)
	require.NoError(t, err)
	require.Len(t, arch, 1)
	assert.NotNil(t, arch[0].ArchivedAt)
}

type failingPayments struct {
	billing.Payments // nil: only archiving is exercised
	err              error
}

func (f failingPayments) DeactivateCompany(context.Context, string) error { return f.err }
func (f failingPayments) Livemode() bool                                  { return true }

func TestArchiveKeepsTheCompanyWhenPaymentsFail(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{Payments: failingPayments{err: assert.AnError}})
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	err = e.Svc.ArchiveCompany(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeUpstreamUnavailable))
	got, err := e.Svc.GetCompany(ada, c.ID)
	require.NoError(t, err, "nothing archived")
	assert.Equal(t, models.CompanyActive, got.Status)
}

func TestCompanyAPIKey(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	bob, bobCong := e.User(t, "bob@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	other, err := e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Other"})
	require.NoError(t, err)

	k1, err := e.Svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(k1.Key, "svc_c_v1_"))
	again, err := e.Svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.Equal(t, k1.Key, again.Key, "permanent: the first read minted it")
	_, err = e.Svc.CompanyAPIKey(bob, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))

	// The key authenticates as the company and reaches only it.
	companyCtx := e.As(t, k1.Key)
	me, err := e.Svc.Me(companyCtx)
	require.NoError(t, err)
	assert.Equal(t, service.CredentialCompanyKey, me.Principal.Credential)
	assert.Equal(t, c.ID, me.Principal.CompanyID)
	assert.Equal(t, "company", me.Principal.Scope())
	_, err = e.Svc.GetCompany(companyCtx, c.ID)
	require.NoError(t, err)
	_, err = e.Svc.GetCompany(companyCtx, other.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.GetConglomerate(companyCtx, cong)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.RotateCompanyAPIKey(companyCtx, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden), "a company key cannot rotate itself")

	// Rotation: another replica that cached the old key keeps accepting it
	// for at most service.CompanyKeyCacheTTL (5 s).
	replica := e.Replica(t)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	require.NoError(t, err)
	k2, err := e.Svc.RotateCompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.NotEqual(t, k1.Key, k2.Key)
	_, err = e.Svc.Authenticate(context.Background(), k1.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the rotating replica drops it at once")
	e.Clock.Advance(service.CompanyKeyCacheTTL - time.Second)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	assert.NoError(t, err, "still cached on the other replica")
	e.Clock.Advance(2 * time.Second)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "stopped within the cache's lifetime")
	_, err = replica.Authenticate(context.Background(), k2.Key)
	assert.NoError(t, err)

	// Archiving ends the key.
	require.NoError(t, e.Svc.ArchiveCompany(ada, c.ID))
	_, err = e.Svc.Authenticate(context.Background(), k2.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}

// TestCreateCompanyIdempotencyKey: a client that lost the response retries
// with the same key and gets the same company, not a second one; the same
// key with other fields is a conflict; another user's identical key is
// their own; a key expires after a day.
func TestCreateCompanyIdempotencyKey(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	in := companies.CompanyInput{Name: "Map Shop", Idea: "Sell maps", IdempotencyKey: "create-7f3a"}

	first, err := e.Svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	again, err := e.Svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID, "the retry returns the company the first request created")
	list, err := e.Svc.ListCompanies(ada, cong)
	require.NoError(t, err)
	assert.Len(t, list, 1, "no second company")

	other := in
	other.Idea = "Sell globes"
	_, err = e.Svc.CreateCompany(ada, cong, other)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "idempotency_key_reused", de.Extra["reason"])

	bad := in
	bad.IdempotencyKey = "has space"
	_, err = e.Svc.CreateCompany(ada, cong, bad)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%v", err)

	bob, bobCong := e.User(t, "bob@example.com")
	bobs, err := e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Map Shop", Idea: "Sell maps", IdempotencyKey: "create-7f3a"})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, bobs.ID, "keys are scoped to the caller")

	// Concurrent retries with one key create one company.
	burst := companies.CompanyInput{Name: "Globe Shop", IdempotencyKey: "create-burst"}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			c, err := e.Svc.CreateCompany(ada, cong, burst)
			assert.NoError(t, err)
			ids[i] = c.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}

	e.Clock.Advance(companies.IdempotencyKeyTTL + time.Minute)
	later, err := e.Svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, later.ID, "an expired key starts over")
	assert.Equal(t, "map-shop-3", later.Handle, "a new company (bob took map-shop-2)")
}
