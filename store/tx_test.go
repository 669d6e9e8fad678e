package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func TestInTxCommitsOrRollsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "owner")
	boom := errors.New("boom")

	err := s.InTx(ctx, func(tx *store.Store) error {
		_, err := tx.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Rolled back", Handle: handle("rolled")})
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)

	var kept models.Company
	err = s.InTx(ctx, func(tx *store.Store) error {
		var err error
		kept, err = tx.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Kept", Handle: handle("kept")})
		if err != nil {
			return err
		}
		// A nested InTx is a savepoint: its failure undoes only its work.
		nestedErr := tx.InTx(ctx, func(inner *store.Store) error {
			_, err := inner.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Inner", Handle: handle("inner")})
			require.NoError(t, err)
			return boom
		})
		require.ErrorIs(t, nestedErr, boom)
		assert.Error(t, tx.Close(), "a transaction cannot be closed")
		return nil
	})
	require.NoError(t, err)

	list, err := s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(c.ID), true)
	require.NoError(t, err)
	assert.Equal(t, []string{kept.ID}, companyIDs(list))
}

func TestPing(t *testing.T) {
	t.Parallel()
	s := testenv.NewStore(t)
	require.NoError(t, s.Ping(context.Background()))
	assert.Contains(t, []string{store.DialectSQLite, store.DialectPostgres}, s.Dialect())
}
