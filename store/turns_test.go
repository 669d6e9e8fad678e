package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	s, ada, bob := twoCompanies(t, "turnkey")
	create := turnMaker(s)

	for range 2 {
		tn, err := create(ada, nil, "no key")
		require.NoError(t, err, "turns without a key are not unique")
		endTurn(t, s, ada, tn.ID)
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

// endTurn ends a turn (completed), so its company may start another.
func endTurn(t *testing.T, s *store.Store, c store.CompanyScope, turnID string) {
	t.Helper()
	_, ended, err := s.Turns().FinishTurn(context.Background(), c, turnID, "", models.TurnResult{Status: models.TurnCompleted, EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorSystem, Summary: "test"})
	require.NoError(t, err)
	require.True(t, ended)
}

// A company has at most one queued or running turn (migration 0038's
// partial unique index): a second is not created and the active one is
// returned with ErrTurnActive, whether it is queued or running, by
// concurrent creates too; once it ended the next is created; another
// company is not affected; a retried key still answers its own turn.
func TestOneActiveTurnPerCompany(t *testing.T) {
	ctx := context.Background()
	s, ada, bob := twoCompanies(t, "oneturn")
	create := turnMaker(s)

	key := "key-" + uuid.NewString()
	queued, err := create(ada, &key, "first")
	require.NoError(t, err)
	active, err := create(ada, nil, "second")
	require.ErrorIs(t, err, store.ErrTurnActive)
	assert.Equal(t, queued.ID, active.ID, "the queued turn is returned")
	again, err := create(ada, &key, "first")
	require.ErrorIs(t, err, store.ErrTurnKeyExists, "a retried message answers its turn, not the conflict")
	assert.Equal(t, queued.ID, again.ID)
	_, err = create(bob, nil, "bob's")
	require.NoError(t, err, "another company's turn is its own")

	_, err = s.Turns().MarkTurnRunning(ctx, ada, queued.ID, time.Now().UTC())
	require.NoError(t, err)
	active, err = create(ada, nil, "third")
	require.ErrorIs(t, err, store.ErrTurnActive)
	assert.Equal(t, queued.ID, active.ID, "the running turn is returned")
	endTurn(t, s, ada, queued.ID)

	var wg sync.WaitGroup
	var created, refused atomic.Int32
	for range 8 {
		wg.Go(func() {
			_, err := create(ada, nil, "racing")
			switch {
			case err == nil:
				created.Add(1)
			case errors.Is(err, store.ErrTurnActive):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, created.Load())
	assert.EqualValues(t, 7, refused.Load())
	page, err := s.Turns().ListTurns(ctx, ada, nil, 20)
	require.NoError(t, err)
	assert.Len(t, page, 2, "refused turns left no row")
}

// Migration 0038 keeps per company the running turn, else the oldest
// queued one, and ends the others failed with conflict, so that its index
// can be made on rows a crash left behind.
func TestMigrationEndsAllButOneActiveTurnPerCompany(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	db := store.GormDB(s)
	require.NoError(t, db.Exec("DROP INDEX idx_turns_one_active").Error)
	_, cong := signUp(t, s, "ada-migrate38")
	var scopes []store.CompanyScope
	for _, name := range []string{"Running Co", "Queued Co", "Single Co"} {
		co, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: name, Handle: handle("m38")})
		require.NoError(t, err)
		scopes = append(scopes, systemScope(t, s, co.ID))
	}
	newTurn := turnMaker(s)
	create := func(c store.CompanyScope) models.Turn {
		tn, err := newTurn(c, nil, "m")
		require.NoError(t, err)
		return tn
	}
	// Running Co: queued, running, queued; Queued Co: three queued;
	// Single Co: one queued.
	r1, r2, r3 := create(scopes[0]), create(scopes[0]), create(scopes[0])
	_, err := s.Turns().MarkTurnRunning(ctx, scopes[0], r2.ID, time.Now().UTC())
	require.NoError(t, err)
	q1, q2, q3 := create(scopes[1]), create(scopes[1]), create(scopes[1])
	single := create(scopes[2])

	require.NoError(t, store.Migration0038().Migrate(db))
	want := map[string]models.TurnStatus{r1.ID: models.TurnFailed, r2.ID: models.TurnRunning, r3.ID: models.TurnFailed,
		q1.ID: models.TurnQueued, q2.ID: models.TurnFailed, q3.ID: models.TurnFailed, single.ID: models.TurnQueued}
	for _, c := range scopes {
		page, err := s.Turns().ListTurns(ctx, c, nil, 10)
		require.NoError(t, err)
		for _, tn := range page {
			assert.Equal(t, want[tn.ID], tn.Status, "turn %s", tn.ID)
			if tn.Status == models.TurnFailed {
				assert.Equal(t, string(models.CodeConflict), tn.ErrorCode)
				assert.NotNil(t, tn.EndedAt)
			}
		}
	}
	_, err = newTurn(scopes[1], nil, "m")
	require.ErrorIs(t, err, store.ErrTurnActive, "the index is made")
}

// twoCompanies is a store with two accounts' companies: Ada's and Bob's.
func twoCompanies(t *testing.T, suffix string) (s *store.Store, ada, bob store.CompanyScope) {
	t.Helper()
	ctx := context.Background()
	s = testenv.NewStore(t)
	_, adaCong := signUp(t, s, "ada-"+suffix)
	_, bobCong := signUp(t, s, "bob-"+suffix)
	adaCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(adaCong.ID), models.Company{Name: "Ada Co", Handle: handle("ada")})
	require.NoError(t, err)
	bobCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCong.ID), models.Company{Name: "Bob Co", Handle: handle("bob")})
	require.NoError(t, err)
	return s, systemScope(t, s, adaCo.ID), systemScope(t, s, bobCo.ID)
}

// turnMaker creates a message's turn of a company, with a key or none.
func turnMaker(s *store.Store) func(c store.CompanyScope, key *string, text string) (models.Turn, error) {
	return func(c store.CompanyScope, key *string, text string) (models.Turn, error) {
		return s.Turns().CreateTurn(context.Background(), c, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: text, IdempotencyKey: key},
			[]models.ContentBlock{{Type: models.ContentText, Text: text}})
	}
}
