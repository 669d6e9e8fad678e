package service_test

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
)

// ada signs a user in and returns a context acting as them with their
// conglomerate id.
func (e *env) user(t *testing.T, email string) (context.Context, string) {
	t.Helper()
	ctx := e.as(t, e.webLogin(t, email, strings.Split(email, "@")[0]))
	congs, err := e.svc.MyConglomerates(ctx)
	require.NoError(t, err)
	return ctx, congs[0].ID
}

func TestCompanyLifecycleAndOwnership(t *testing.T) {
	e := newEnv(t)
	ada, adaCong := e.user(t, "ada@example.com")
	bob, bobCong := e.user(t, "bob@example.com")

	c, err := e.svc.CreateCompany(ada, adaCong, service.CompanyInput{Name: "Crème Brûlée Co.", Idea: "desserts"})
	require.NoError(t, err)
	assert.Equal(t, "creme-brulee-co", c.Handle, "derived from the name")
	assert.Equal(t, models.CompanyActive, c.Status)

	// A derived handle that is taken takes the next free one; an explicit
	// one is refused with a suggestion.
	c2, err := e.svc.CreateCompany(bob, bobCong, service.CompanyInput{Name: "Creme brulee co"})
	require.NoError(t, err)
	assert.Equal(t, "creme-brulee-co-2", c2.Handle)
	_, err = e.svc.CreateCompany(bob, bobCong, service.CompanyInput{Name: "x", Handle: "creme-brulee-co"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeHandleTaken, de.Code)
	assert.Equal(t, "creme-brulee-co-3", de.Extra["suggested_handle"])
	_, err = e.svc.CreateCompany(ada, bobCong, service.CompanyInput{Name: "intruder"})
	assert.True(t, models.IsCode(err, models.CodeForbidden), "creating in another account")

	_, err = e.svc.GetCompany(bob, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.svc.GetCompany(ada, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	paused := models.CompanyPaused
	mission := "Sell desserts"
	c, err = e.svc.UpdateCompany(ada, c.ID, service.CompanyUpdate{Status: &paused, Mission: &mission})
	require.NoError(t, err)
	assert.Equal(t, models.CompanyPaused, c.Status)
	assert.Equal(t, "desserts", c.Idea, "omitted fields stay")
	archived := models.CompanyArchived
	_, err = e.svc.UpdateCompany(ada, c.ID, service.CompanyUpdate{Status: &archived})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "archive is DELETE")

	require.NoError(t, e.svc.ArchiveCompany(ada, c.ID))
	require.NoError(t, e.svc.ArchiveCompany(ada, c.ID), "repeating is a no-op")
	_, err = e.svc.GetCompany(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeNotFound), "archived companies have no pages")
	list, err := e.svc.ListCompanies(ada, adaCong)
	require.NoError(t, err)
	assert.Empty(t, list)
	arch, err := e.svc.ListArchivedCompanies(ada, adaCong)
	require.NoError(t, err)
	require.Len(t, arch, 1)
	assert.NotNil(t, arch[0].ArchivedAt)
}

type failingPayments struct {
	service.Payments // nil: only archiving is exercised
	err              error
}

func (f failingPayments) DeactivateCompany(context.Context, string) error { return f.err }
func (f failingPayments) Livemode() bool                                  { return true }

func TestArchiveKeepsTheCompanyWhenPaymentsFail(t *testing.T) {
	e := newEnvWith(t, service.Options{Payments: failingPayments{err: assert.AnError}})
	ada, cong := e.user(t, "ada@example.com")
	c, err := e.svc.CreateCompany(ada, cong, service.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	err = e.svc.ArchiveCompany(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeUpstreamUnavailable))
	got, err := e.svc.GetCompany(ada, c.ID)
	require.NoError(t, err, "nothing archived")
	assert.Equal(t, models.CompanyActive, got.Status)
}

func TestCompanyAPIKey(t *testing.T) {
	e := newEnv(t)
	ada, cong := e.user(t, "ada@example.com")
	bob, bobCong := e.user(t, "bob@example.com")
	c, err := e.svc.CreateCompany(ada, cong, service.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	other, err := e.svc.CreateCompany(bob, bobCong, service.CompanyInput{Name: "Other"})
	require.NoError(t, err)

	k1, err := e.svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(k1.Key, "svc_c_v1_"))
	again, err := e.svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.Equal(t, k1.Key, again.Key, "permanent: the first read minted it")
	_, err = e.svc.CompanyAPIKey(bob, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))

	// The key authenticates as the company and reaches only it.
	companyCtx := e.as(t, k1.Key)
	me, err := e.svc.Me(companyCtx)
	require.NoError(t, err)
	assert.Equal(t, service.CredentialCompanyKey, me.Principal.Credential)
	assert.Equal(t, c.ID, me.Principal.CompanyID)
	assert.Equal(t, "company", me.Principal.Scope())
	_, err = e.svc.GetCompany(companyCtx, c.ID)
	require.NoError(t, err)
	_, err = e.svc.GetCompany(companyCtx, other.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.svc.GetConglomerate(companyCtx, cong)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.svc.RotateCompanyAPIKey(companyCtx, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden), "a company key cannot rotate itself")

	// Rotation: another replica that cached the old key keeps accepting it
	// for at most 60 seconds.
	replica := e.replica(t)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	require.NoError(t, err)
	k2, err := e.svc.RotateCompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	assert.NotEqual(t, k1.Key, k2.Key)
	_, err = e.svc.Authenticate(context.Background(), k1.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the rotating replica drops it at once")
	e.clock.Advance(59 * time.Second)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	assert.NoError(t, err, "still cached on the other replica")
	e.clock.Advance(2 * time.Second)
	_, err = replica.Authenticate(context.Background(), k1.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "stopped within 60 s")
	_, err = replica.Authenticate(context.Background(), k2.Key)
	assert.NoError(t, err)

	// Archiving ends the key.
	require.NoError(t, e.svc.ArchiveCompany(ada, c.ID))
	_, err = e.svc.Authenticate(context.Background(), k2.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}

// TestCreateCompanyIdempotencyKey: a client that lost the response retries
// with the same key and gets the same company, not a second one; the same
// key with other fields is a conflict; another user's identical key is
// their own; a key expires after a day.
func TestCreateCompanyIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	ada, cong := e.user(t, "ada@example.com")
	in := service.CompanyInput{Name: "Map Shop", Idea: "Sell maps", IdempotencyKey: "create-7f3a"}

	first, err := e.svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	again, err := e.svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID, "the retry returns the company the first request created")
	list, err := e.svc.ListCompanies(ada, cong)
	require.NoError(t, err)
	assert.Len(t, list, 1, "no second company")

	other := in
	other.Idea = "Sell globes"
	_, err = e.svc.CreateCompany(ada, cong, other)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "idempotency_key_reused", de.Extra["reason"])

	bad := in
	bad.IdempotencyKey = "has space"
	_, err = e.svc.CreateCompany(ada, cong, bad)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%v", err)

	bob, bobCong := e.user(t, "bob@example.com")
	bobs, err := e.svc.CreateCompany(bob, bobCong, service.CompanyInput{Name: "Map Shop", Idea: "Sell maps", IdempotencyKey: "create-7f3a"})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, bobs.ID, "keys are scoped to the caller")

	// Concurrent retries with one key create one company.
	burst := service.CompanyInput{Name: "Globe Shop", IdempotencyKey: "create-burst"}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			c, err := e.svc.CreateCompany(ada, cong, burst)
			assert.NoError(t, err)
			ids[i] = c.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}

	e.clock.Advance(service.IdempotencyKeyTTL + time.Minute)
	later, err := e.svc.CreateCompany(ada, cong, in)
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, later.ID, "an expired key starts over")
	assert.Equal(t, "map-shop-3", later.Handle, "a new company (bob took map-shop-2)")
}
