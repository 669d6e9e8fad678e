package devserver_test

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// The embedded server: its SQLite persistence plugin imports
	// modernc.org/sqlite, which registers the "sqlite" driver.
	_ "holdco/devserver"
	"holdco/models"
	"holdco/store"
)

// TestStoreWorksBesideTheServersSQLitePlugin links holdco's store beside
// the embedded server, as `holdco serve` does, and proves the two share
// one "sqlite" driver registration (a second driver under that name would
// panic at init). It lives here, in a package whose tests link the server
// anyway (the Makefile's SERVER_PKGS): in the store's tests it made their
// test binary link, and go test vet, the server's packages and the AWS
// SDK's they import.
func TestStoreWorksBesideTheServersSQLitePlugin(t *testing.T) {
	assert.Contains(t, sql.Drivers(), "sqlite")

	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "with-temporal.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))

	iss, sub := "https://idp.example", "temporal"
	_, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "t@example.com", NormalizedEmail: "t@example.com",
		Name: "T", Issuer: &iss, Subject: &sub}, "T's conglomerate")
	require.NoError(t, err)
	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "T", Handle: "t"})
	require.NoError(t, err)
	// Unique violations are recognised on this driver too.
	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "T2", Handle: "t"})
	require.ErrorIs(t, err, models.ErrDuplicate)
}
