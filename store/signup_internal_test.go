package store

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"holdco/models"
)

// A sign-up that fails after the user row was written leaves no user.
func TestFailedSignUpLeavesNoUser(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "signup.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))

	boom := errors.New("boom")
	require.NoError(t, s.db.Callback().Create().Before("gorm:create").Register("test:fail_conglomerate", func(db *gorm.DB) {
		if db.Statement.Table == "conglomerates" {
			_ = db.AddError(boom)
		}
	}))

	user := models.User{ID: "00000000-0000-4000-8000-000000000001", Email: "a@example.com", NormalizedEmail: "a@example.com"}
	_, _, err = s.Identity().CreateUserWithConglomerate(ctx, user, "doomed")
	require.ErrorIs(t, err, boom)

	_, err = s.Identity().GetUser(ctx, user.ID)
	require.ErrorIs(t, err, models.ErrNotFound)
}
