package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// Two tenants side by side: nothing one owns shows up in the other's
// answers.
func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	alice, aliceCo := signUp(t, s, "alice")
	bob, bobCo := signUp(t, s, "bob")

	aliceCompany, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(aliceCo.ID), models.Company{Name: "A", Handle: handle("alice")})
	require.NoError(t, err)
	bobCompany, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCo.ID), models.Company{Name: "B", Handle: handle("bob")})
	require.NoError(t, err)

	// The tenant argument decides where a company goes, not the row's field.
	smuggled, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(aliceCo.ID), models.Company{Name: "S", Handle: handle("smuggled"), ConglomerateID: bobCo.ID})
	require.NoError(t, err)
	assert.Equal(t, aliceCo.ID, smuggled.ConglomerateID)

	list, err := s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(aliceCo.ID), true)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{aliceCompany.ID, smuggled.ID}, companyIDs(list))
	list, err = s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(bobCo.ID), true)
	require.NoError(t, err)
	assert.Equal(t, []string{bobCompany.ID}, companyIDs(list))

	for _, tc := range []struct {
		conglomerate, user string
		want               bool
	}{
		{aliceCo.ID, alice.ID, true},
		{bobCo.ID, bob.ID, true},
		{aliceCo.ID, bob.ID, false},
		{bobCo.ID, alice.ID, false},
	} {
		member, err := s.Identity().IsMember(ctx, tc.conglomerate, tc.user)
		require.NoError(t, err)
		assert.Equal(t, tc.want, member, "IsMember(%s, %s)", tc.conglomerate, tc.user)
	}

	congls, err := s.Identity().ListConglomeratesForUser(ctx, bob.ID)
	require.NoError(t, err)
	require.Len(t, congls, 1)
	assert.Equal(t, bobCo.ID, congls[0].ID)

	// Only the authorization step makes a scope: Alice reaches her own
	// company, not Bob's.
	scope, got, err := s.AuthorizeCompany(ctx, store.Actor{UserID: alice.ID}, aliceCompany.ID, false)
	require.NoError(t, err)
	assert.Equal(t, aliceCompany.ID, got.ID)
	assert.Equal(t, aliceCompany.ID, scope.ID())
	assert.Equal(t, aliceCo.ID, scope.ConglomerateID())
	_, _, err = s.AuthorizeCompany(ctx, store.Actor{UserID: alice.ID}, bobCompany.ID, false)
	assert.ErrorIs(t, err, store.ErrForbidden)
}

func TestAuthorizationStepMakesScopes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	alice, aliceCong := signUp(t, s, "alice")
	bob, bobCong := signUp(t, s, "bob")
	a, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(aliceCong.ID), models.Company{Name: "A", Handle: handle("a")})
	require.NoError(t, err)
	b, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCong.ID), models.Company{Name: "B", Handle: handle("b")})
	require.NoError(t, err)
	gone, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(aliceCong.ID), models.Company{Name: "G", Handle: handle("g"), Status: models.CompanyArchived})
	require.NoError(t, err)

	for _, tc := range []struct {
		name     string
		actor    store.Actor
		company  string
		archived bool
		want     error
	}{
		{"user on own company", store.Actor{UserID: alice.ID}, a.ID, false, nil},
		{"user B on A's company", store.Actor{UserID: bob.ID}, a.ID, false, store.ErrForbidden},
		{"company key of A on A", store.Actor{CompanyID: a.ID}, a.ID, false, nil},
		{"company key of A on B", store.Actor{CompanyID: a.ID}, b.ID, false, store.ErrForbidden},
		{"operator on a company", store.Actor{Admin: true}, a.ID, false, store.ErrForbidden},
		{"nobody", store.Actor{}, a.ID, false, store.ErrForbidden},
		{"missing company", store.Actor{UserID: alice.ID}, uuid.NewString(), false, models.ErrNotFound},
		{"archived company", store.Actor{UserID: alice.ID}, gone.ID, false, models.ErrNotFound},
		{"archived company allowed", store.Actor{UserID: alice.ID}, gone.ID, true, nil},
	} {
		scope, _, err := s.AuthorizeCompany(ctx, tc.actor, tc.company, tc.archived)
		if !tc.archived {
			// The dashboard's summary applies the same rule to the row it
			// reads with the summary, and gives nothing when it refuses.
			sumScope, c, sum, sumErr := s.Companies().AuthorizeCompanySummary(ctx, tc.actor, tc.company, time.Now().UTC(), store.HeadlineDays{})
			assert.Equal(t, scope, sumScope, tc.name)
			if tc.want != nil {
				assert.ErrorIs(t, sumErr, tc.want, tc.name)
				assert.Equal(t, models.Company{}, c, tc.name)
				assert.Equal(t, store.CompanySummary{}, sum, tc.name)
			} else {
				require.NoError(t, sumErr, tc.name)
				assert.Equal(t, tc.company, c.ID, tc.name)
				assert.Equal(t, sumScope.ConglomerateID(), c.ConglomerateID, tc.name)
			}
			// And with the lists (one round trip on Postgres).
			dashScope, c, sum, lists, dashErr := s.Companies().AuthorizeCompanyDashboard(ctx, tc.actor, tc.company, time.Now().UTC(), store.HeadlineDays{}, 10, 20, 20)
			assert.Equal(t, scope, dashScope, tc.name)
			if tc.want != nil {
				assert.ErrorIs(t, dashErr, tc.want, tc.name)
				assert.Equal(t, models.Company{}, c, tc.name)
				assert.Equal(t, store.CompanySummary{}, sum, tc.name)
				assert.Equal(t, store.DashboardLists{}, lists, tc.name)
			} else {
				require.NoError(t, dashErr, tc.name)
				assert.Equal(t, tc.company, c.ID, tc.name)
				assert.NotNil(t, lists.Activity, tc.name)
			}
		}
		if tc.want != nil {
			assert.ErrorIs(t, err, tc.want, tc.name)
			assert.Equal(t, store.CompanyScope{}, scope, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.company, scope.ID(), tc.name)
	}

	for _, tc := range []struct {
		name  string
		actor store.Actor
		cong  string
		want  error
	}{
		{"member", store.Actor{UserID: alice.ID}, aliceCong.ID, nil},
		{"user B on A's account", store.Actor{UserID: bob.ID}, aliceCong.ID, store.ErrForbidden},
		{"company key", store.Actor{CompanyID: a.ID}, aliceCong.ID, store.ErrForbidden},
		{"operator", store.Actor{Admin: true}, aliceCong.ID, store.ErrForbidden},
		{"missing", store.Actor{UserID: alice.ID}, uuid.NewString(), models.ErrNotFound},
	} {
		scope, _, err := s.AuthorizeConglomerate(ctx, tc.actor, tc.cong)
		if tc.want != nil {
			assert.ErrorIs(t, err, tc.want, tc.name)
			assert.Equal(t, store.ConglomerateScope{}, scope, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.cong, scope.ID(), tc.name)
	}

	_, err = store.AuthorizeAdmin(store.Actor{UserID: alice.ID})
	assert.ErrorIs(t, err, store.ErrForbidden)
	admin, err := store.AuthorizeAdmin(store.Actor{Admin: true})
	require.NoError(t, err)
	_, got, err := s.AdminCompany(ctx, admin, b.ID)
	require.NoError(t, err)
	assert.Equal(t, b.ID, got.ID)

	// A scope of A's account reads none of B's companies.
	aScope, _, err := s.AuthorizeConglomerate(ctx, store.Actor{UserID: alice.ID}, aliceCong.ID)
	require.NoError(t, err)
	_, _, err = s.CompanyInConglomerate(ctx, aScope, b.ID)
	assert.ErrorIs(t, err, models.ErrNotFound)
}

// TestZeroScopeIsRefused: every scoped method refuses a scope the
// authorization step did not make, before any query.
func TestZeroScopeIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	var co store.CompanyScope
	var cong store.ConglomerateScope
	var admin store.AdminScope
	at := time.Now()
	for name, call := range map[string]func() error{
		"GetCompany":          func() error { _, err := s.Companies().GetCompany(ctx, co); return err },
		"UpdateCompanyFields": func() error { return s.Companies().UpdateCompanyFields(ctx, co, models.Company{}) },
		"ArchiveCompany":      func() error { _, err := s.Companies().ArchiveCompany(ctx, co, at); return err },
		"ListResources":       func() error { _, err := s.Companies().ListResources(ctx, co); return err },
		"SaveResource":        func() error { return s.Companies().SaveResource(ctx, co, models.CompanyResource{}) },
		"LiveCompanyKey":      func() error { _, err := s.Identity().LiveCompanyKey(ctx, co); return err },
		"CreateCompanyKeyIfNone": func() error {
			_, err := s.Identity().CreateCompanyKeyIfNone(ctx, co, models.CompanyAPIKey{})
			return err
		},
		"RotateCompanyKey": func() error { _, err := s.Identity().RotateCompanyKey(ctx, co, models.CompanyAPIKey{}, at); return err },
		"EnsureCompanyOIDCClient": func() error {
			_, err := s.OAuth().EnsureCompanyOIDCClient(ctx, co, models.CompanyOIDCClient{})
			return err
		},
		"GetCompanyOIDCClient": func() error { _, err := s.OAuth().GetCompanyOIDCClient(ctx, co); return err },
		"RevokeCompanyOIDCClient": func() error {
			_, err := s.OAuth().RevokeCompanyOIDCClient(ctx, admin, co, models.CompanyOIDCClient{}, "why", at)
			return err
		},
		"EnableCompanyOIDCClient": func() error { return s.OAuth().EnableCompanyOIDCClient(ctx, admin, uuid.NewString()) },
		"AdminCompany":            func() error { _, _, err := s.AdminCompany(ctx, admin, uuid.NewString()); return err },
		"CreateCompany": func() error {
			_, err := s.Companies().CreateCompany(ctx, cong, models.Company{Handle: handle("z")})
			return err
		},
		"CreateCompanyToProvision": func() error {
			_, _, err := s.Companies().CreateCompanyToProvision(ctx, cong, models.Company{Handle: handle("z")}, true, nil)
			return err
		},
		"ListCompanies":         func() error { _, err := s.Companies().ListCompanies(ctx, cong, true); return err },
		"CompanyInConglomerate": func() error { _, _, err := s.CompanyInConglomerate(ctx, cong, uuid.NewString()); return err },
		"ApplyCreditEntry": func() error {
			_, err := s.Billing().ApplyCreditEntry(ctx, cong, models.CreditLedgerEntry{Type: models.EntryTopUp, Amount: 1}, nil, at)
			return err
		},
		"CreditBalance":              func() error { _, err := s.Billing().CreditBalance(ctx, cong, at); return err },
		"CreditLedgerPage":           func() error { _, _, err := s.Billing().CreditLedgerPage(ctx, cong, 0, 10); return err },
		"SetCustomerID":              func() error { return s.Billing().SetCustomerID(ctx, cong, "cus_x") },
		"SetAutoTopUp":               func() error { return s.Billing().SetAutoTopUp(ctx, cong, true, 1, 1) },
		"SetConnectAccount":          func() error { return s.Billing().SetConnectAccount(ctx, cong, "acct_x") },
		"UpdateConglomerateSettings": func() error { return s.Identity().UpdateConglomerateSettings(ctx, cong, "x", nil) },
		"ListLiveCompanies":          func() error { _, err := s.Companies().ListLiveCompanies(ctx, admin); return err },
		"RecordActivity": func() error {
			return s.Companies().RecordActivity(ctx, co, models.ActivityInput{Kind: models.ActivityEmailSent})
		},
		"ListActivity": func() error { _, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{}, 10); return err },
		"ReachMilestone": func() error {
			_, err := s.Companies().ReachMilestone(ctx, co, models.MilestoneFirstDollar, at)
			return err
		},
		"ListMilestones":     func() error { _, err := s.Companies().ListMilestones(ctx, co); return err },
		"MarkMilestonesSeen": func() error { _, err := s.Companies().MarkMilestonesSeen(ctx, co, at); return err },
		"ListDocuments":      func() error { _, err := s.Companies().ListDocuments(ctx, co, true); return err },
		"GetDocument":        func() error { _, err := s.Companies().GetDocument(ctx, co, "mission"); return err },
		"PutDocument": func() error {
			_, _, err := s.Companies().PutDocument(ctx, co, models.Document{DocumentType: "mission"}, models.ActivityInput{Kind: models.ActivityDocumentUpdated})
			return err
		},
		"DeleteDocument": func() error {
			return s.Companies().DeleteDocument(ctx, co, "mission", models.ActivityInput{Kind: models.ActivityDocumentDeleted})
		},
		"MarkProvisioningStarted": func() error { return s.Companies().MarkProvisioningStarted(ctx, co, at) },
		"ProvisioningSeedRepo":    func() error { _, err := s.Companies().ProvisioningSeedRepo(ctx, co); return err },
		"RecordImportResume":      func() error { return s.Companies().RecordImportResume(ctx, co, at) },
	} {
		assert.ErrorIs(t, call(), store.ErrNoScope, name)
	}
	assert.Equal(t, store.CompanyScope{}, admin.CompanyScope(models.Company{ID: uuid.NewString()}))
}
