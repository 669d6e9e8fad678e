package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// A message's idempotency key is unique per company where set (migration
// 0036's partial unique index): the second turn with a key is not created
// and the first is returned; turns without a key and another company's
// turn with the same key are not affected.
func TestTurnIdempotencyKeyIsUniquePerCompanyWhereSet(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, adaCong := signUp(t, s, "ada-turnkey")
	_, bobCong := signUp(t, s, "bob-turnkey")
	adaCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(adaCong.ID), models.Company{Name: "Ada Co", Handle: handle("ada")})
	require.NoError(t, err)
	bobCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCong.ID), models.Company{Name: "Bob Co", Handle: handle("bob")})
	require.NoError(t, err)
	ada, bob := systemScope(t, s, adaCo.ID), systemScope(t, s, bobCo.ID)

	create := func(c store.CompanyScope, key *string, text string) (models.Turn, error) {
		return s.Turns().CreateTurn(ctx, c, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: text, IdempotencyKey: key},
			[]models.ContentBlock{{Type: models.ContentText, Text: text}})
	}
	for range 2 {
		_, err := create(ada, nil, "no key")
		require.NoError(t, err, "turns without a key are not unique")
	}
	key := "key-" + uuid.NewString()
	first, err := create(ada, &key, "first")
	require.NoError(t, err)
	again, err := create(ada, &key, "second")
	require.ErrorIs(t, err, store.ErrTurnKeyExists)
	assert.Equal(t, first.ID, again.ID, "the stored turn is returned")
	assert.Equal(t, "first", again.Message)
	found, err := s.Turns().TurnByIdempotencyKey(ctx, ada, key)
	require.NoError(t, err)
	assert.Equal(t, first.ID, found.ID)

	other, err := create(bob, &key, "first")
	require.NoError(t, err, "another company's key is its own")
	assert.NotEqual(t, first.ID, other.ID)
	_, err = s.Turns().TurnByIdempotencyKey(ctx, bob, "key-unknown")
	assert.ErrorIs(t, err, models.ErrNotFound)

	page, err := s.Turns().ListTurns(ctx, ada, nil, 10)
	require.NoError(t, err)
	assert.Len(t, page, 3, "the refused turn left no row")
}
