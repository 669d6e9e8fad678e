package turns_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/turns"
)

// countingTemporal counts the workflows the use cases start (a start
// Temporal refused is not one); while down is set starts fail as an
// unreachable Temporal's do.
type countingTemporal struct {
	client.Client
	starts atomic.Int32
	down   atomic.Bool
}

func (c *countingTemporal) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if c.down.Load() {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	run, err := c.Client.ExecuteWorkflow(ctx, o, wf, args...)
	if err == nil {
		c.starts.Add(1)
	}
	return run, err
}

// newKeyedWorld is a world whose workflow starts are counted.
func newKeyedWorld(t *testing.T, model turns.Model) (*world, *countingTemporal) {
	t.Helper()
	ct := &countingTemporal{}
	w := newWorldWith(t, model, 100, func(c client.Client) client.Client { ct.Client = c; return ct })
	return w, ct
}

func (w *world) sendKeyed(text, key string) (turns.Started, error) {
	return w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: text, IdempotencyKey: key})
}

func (w *world) turnCount(t *testing.T) int {
	t.Helper()
	page, err := w.e.Svc.Turns.ListTurns(w.owner, w.company, 100, "")
	require.NoError(t, err)
	return len(page.Turns)
}

// A message sent again with its key answers the turn the first send
// created, as it is now, and starts no second workflow.
func TestMessageSentAgainWithItsKeyAnswersTheFirstTurn(t *testing.T) {
	t.Parallel()
	w, ct := newKeyedWorld(t, scripted.New(0))
	key := uuid.NewString()
	first, err := w.sendKeyed("Plan the launch", key)
	require.NoError(t, err)
	again, err := w.sendKeyed("Plan the launch", key)
	require.NoError(t, err)
	assert.Equal(t, first.TurnID, again.TurnID)
	assert.Equal(t, first.SessionID, again.SessionID)
	assert.Equal(t, first.CompanyID, again.CompanyID)
	w.e.Svc.Turns.Close(context.Background()) // the start follows the answer
	assert.EqualValues(t, 1, ct.starts.Load(), "one workflow start")

	w.wait(t, first.TurnID, ended)
	late, err := w.sendKeyed("  Plan the launch\n", key) // trimmed, as stored
	require.NoError(t, err)
	assert.Equal(t, first.TurnID, late.TurnID)
	assert.Equal(t, models.TurnCompleted, late.Status, "the turn's current status")
	assert.EqualValues(t, 1, ct.starts.Load())
	assert.Equal(t, 1, w.turnCount(t))

	// Another key is another message, as without a key.
	other, err := w.sendKeyed("Plan the launch", uuid.NewString())
	require.NoError(t, err)
	assert.NotEqual(t, first.TurnID, other.TurnID)
	w.wait(t, other.TurnID, ended)
}

// While the first send's turn runs, its key answers that turn, not the
// conflict another message gets.
func TestMessageSentAgainWhileItsTurnRunsAnswersThatTurn(t *testing.T) {
	t.Parallel()
	w, ct := newKeyedWorld(t, scripted.New(time.Hour))
	key := uuid.NewString()
	first, err := w.sendKeyed("Research bakeries", key)
	require.NoError(t, err)
	w.wait(t, first.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })

	again, err := w.sendKeyed("Research bakeries", key)
	require.NoError(t, err, "not a conflict")
	assert.Equal(t, first.TurnID, again.TurnID)
	assert.Equal(t, models.TurnRunning, again.Status)
	assert.EqualValues(t, 1, ct.starts.Load())

	_, err = w.sendKeyed("Something else", uuid.NewString())
	de := domainErr(t, err)
	assert.Equal(t, models.CodeConflict, de.Code, "another key while a turn runs: as today")
	assert.Equal(t, first.TurnID, de.Extra["turn_id"])
	assert.Equal(t, 1, w.turnCount(t), "the refused message left no turn")

	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, first.TurnID)
	require.NoError(t, err)
}

// A send whose process died after the commit, before the start and the
// answer, leaves its turn: the retry with the key answers that turn and
// starts nothing (the sweeper starts it). So does a send while Temporal is
// unreachable: it was answered, its turn waits for the sweeper.
func TestMessageSentAgainAfterItsProcessDiedAnswersTheKeptTurn(t *testing.T) {
	t.Parallel()
	w, ct := newKeyedWorld(t, scripted.New(0))
	ctx := context.Background()

	// The row a send committed before its process died.
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	diedKey := uuid.NewString()
	lost, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage,
		Message: "Write the newsletter", IdempotencyKey: &diedKey}, []models.ContentBlock{{Type: models.ContentText, Text: "Write the newsletter"}})
	require.NoError(t, err)

	again, err := w.sendKeyed("Write the newsletter", diedKey)
	require.NoError(t, err)
	assert.Equal(t, lost.ID, again.TurnID)
	assert.Equal(t, lost.SessionID, again.SessionID)
	assert.Equal(t, models.TurnQueued, again.Status)
	assert.Zero(t, ct.starts.Load(), "the retry starts nothing")
	assert.Equal(t, 1, w.turnCount(t))

	sw := &turns.Sweeper{Store: w.e.Store, Temporal: w.tmp.Client, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, models.TurnCompleted, w.wait(t, lost.ID, ended).Status)
	late, err := w.sendKeyed("Write the newsletter", diedKey)
	require.NoError(t, err)
	assert.Equal(t, lost.ID, late.TurnID)
	assert.Equal(t, models.TurnCompleted, late.Status)
	assert.Equal(t, 1, w.turnCount(t))

	downKey := uuid.NewString()
	ct.down.Store(true)
	queued, err := w.sendKeyed("Plan the launch", downKey)
	require.NoError(t, err, "taken while Temporal is down")
	assert.Equal(t, models.TurnQueued, queued.Status)
	w.e.Svc.Turns.Close(ctx)
	ct.down.Store(false)
	retried, err := w.sendKeyed("Plan the launch", downKey)
	require.NoError(t, err)
	assert.Equal(t, queued.TurnID, retried.TurnID, "the retry answers the kept turn")
	assert.Zero(t, ct.starts.Load(), "and starts nothing")
	n, err = sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, models.TurnCompleted, w.wait(t, queued.TurnID, ended).Status)
	assert.Equal(t, 2, w.turnCount(t))
}

// Concurrent sends with one key create one turn and all answer it.
func TestConcurrentMessagesWithOneKeyCreateOneTurn(t *testing.T) {
	t.Parallel()
	w, ct := newKeyedWorld(t, scripted.New(0))
	key := uuid.NewString()
	var wg sync.WaitGroup
	ids := make([]string, 10)
	errs := make([]error, 10)
	for i := range ids {
		wg.Go(func() {
			st, err := w.sendKeyed("Plan the launch", key)
			ids[i], errs[i] = st.TurnID, err
		})
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i])
		assert.Equal(t, ids[0], ids[i])
	}
	w.e.Svc.Turns.Close(context.Background()) // the start follows the answer
	assert.EqualValues(t, 1, ct.starts.Load(), "one workflow start")
	assert.Equal(t, 1, w.turnCount(t))
	w.wait(t, ids[0], ended)
}

// A key sent with another message is a conflict; a bad key is refused.
func TestMessageKeyReusedForAnotherMessageIsAConflict(t *testing.T) {
	t.Parallel()
	w, ct := newKeyedWorld(t, scripted.New(0))
	key := uuid.NewString()
	first, err := w.sendKeyed("Plan the launch", key)
	require.NoError(t, err)
	w.wait(t, first.TurnID, ended)

	_, err = w.sendKeyed("Plan the party", key)
	de := domainErr(t, err)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "idempotency_key_reused", de.Extra["reason"])
	assert.Contains(t, de.Detail, "another message")
	assert.EqualValues(t, 1, ct.starts.Load())
	assert.Equal(t, 1, w.turnCount(t))

	for _, bad := range []string{"with space", strings.Repeat("k", 256)} {
		_, err = w.sendKeyed("Plan the party", bad)
		de = domainErr(t, err)
		assert.Equal(t, models.CodeInvalidArgument, de.Code)
		assert.Equal(t, "Idempotency-Key", de.Field)
	}
	assert.Equal(t, 1, w.turnCount(t))
}
