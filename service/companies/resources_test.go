package companies_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/servicetest"
	"holdco/store"
)

// A tenant sees what their resources are called (repository and database
// names, the site URL) and why one failed as a class; the server's paths,
// hosts and the raw error stay with operators.
func TestResourcesShowTenantsNoServerPathsOrRawErrors(t *testing.T) {
	ctx := context.Background()
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Store.Companies().CreateCompany(ctx, e.Store.SystemConglomerateScope(cong), models.Company{Name: "Shop", Handle: "shop-" + uuid.NewString()[:8]})
	require.NoError(t, err)

	dataDir := filepath.Join(t.TempDir(), "srv", "holdco-data")
	repoPath := filepath.Join(dataDir, "repos", c.ID+".git")
	dbPath := filepath.Join(dataDir, "company-dbs", c.ID+".db")
	rawErr := "companydb: create " + c.ID + ": open " + dbPath + ": permission denied"
	for _, r := range []models.CompanyResource{
		{Kind: models.ResourceRepository, Status: models.ResourceReady, Ref: repoPath},
		{Kind: models.ResourceDatabase, Status: models.ResourceFailed, LastError: rawErr},
		{Kind: models.ResourceHosting, Status: models.ResourceFailed, Ref: "https://deploy:tok3n@sites.example/shop/?k=v",
			LastError: `failed to connect to host=db.internal user=holdco_admin: dial tcp 10.0.0.7:5432: connect: connection refused`},
	} {
		r.CompanyID = c.ID
		require.NoError(t, e.Store.Companies().SaveResource(ctx, systemScope(t, e.Store, r.CompanyID), r))
	}

	views, err := e.Svc.CompanyResources(ada, c.ID)
	require.NoError(t, err)
	require.Len(t, views, 3)
	byKind := map[models.ResourceKind]int{}
	for i, v := range views {
		byKind[v.Kind] = i
		assert.Empty(t, v.LastError, v.Kind)
		assert.NotContains(t, v.Ref, dataDir, v.Kind)
		assert.NotContains(t, v.Ref, "tok3n", v.Kind)
	}
	repo, db, site := views[byKind[models.ResourceRepository]], views[byKind[models.ResourceDatabase]], views[byKind[models.ResourceHosting]]
	assert.Equal(t, c.ID+".git", repo.Ref)
	assert.Empty(t, repo.ErrorClass)
	assert.Equal(t, "provider_error", db.ErrorClass)
	assert.Equal(t, "unavailable", site.ErrorClass)
	assert.Equal(t, "https://sites.example/shop/", site.Ref)

	// Operators keep the raw error.
	tok, err := e.Svc.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)
	diag, err := e.Svc.DiagnoseCompanies(e.As(t, tok))
	require.NoError(t, err)
	var raw []string
	for _, d := range diag {
		for _, r := range d.Resources {
			if d.CompanyID == c.ID && r.Kind == models.ResourceDatabase {
				raw = append(raw, r.LastError, r.Problem)
			}
		}
	}
	assert.Equal(t, []string{rawErr, "provisioning failed: " + rawErr}, raw)
}

// systemScope is the worker's scope of a company, for tests that read or
// write its rows directly.
func systemScope(t testing.TB, s *store.Store, companyID string) store.CompanyScope {
	t.Helper()
	sc, err := s.SystemCompanyScope(context.Background(), companyID)
	require.NoError(t, err)
	return sc
}
