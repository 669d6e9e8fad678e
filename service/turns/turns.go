// Package turns holds the agent turn use cases: send a message (which
// starts a turn), read a turn, interrupt it, list a company's turns, and
// run a task. A turn is a row that holds its state for every replica (a
// company has at most one queued or running turn: a unique index) and the
// Temporal workflow turn:<company_id> that runs it, started from the row
// once the row is committed.
package turns

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/observability"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/files"
	"holdco/store"
	"holdco/workflows/contract"
)

// Limits of a message.
const (
	// MaxMessageChars is the longest message (characters).
	MaxMessageChars = 32_000
	// MaxAttachments is how many files one message may attach.
	MaxAttachments = 10
)

// Bounds of a message's Temporal calls (tests scale them: bounds.Of).
const (
	// startTimeout bounds the workflow start of a turn.
	startTimeout = 10 * time.Second
	// closeWait bounds a start's wait for an ended turn's workflow to
	// close.
	closeWait = 5 * time.Second
	// interruptWait is how long an interrupt waits for the turn to end.
	interruptWait = 30 * time.Second
)

// Service is the turn use cases.
type Service struct {
	core     *service.Core
	store    *store.Store
	billing  *billing.Service
	files    *files.Service
	temporal client.Client
	logger   *slog.Logger
	now      func() time.Time
	// launches are the workflow starts under way (Close waits for them).
	launches inFlight
}

// New builds the turn use cases. temporal nil: turns cannot start
// (upstream_unavailable).
func New(core *service.Core, bill *billing.Service, fs *files.Service, temporal client.Client) *Service {
	return &Service{core: core, store: core.Store(), billing: bill, files: fs, temporal: temporal, logger: core.Logger(), now: core.Clock()}
}

// Message is what a user sends to a company's agent.
type Message struct {
	Text string
	// Attachments are ids of the company's files.
	Attachments []string
	// SessionID continues a conversation of the company; empty continues
	// the session whose last turn is waiting for an answer, else starts a
	// new session.
	SessionID string
	// IdempotencyKey (optional; REST's Idempotency-Key header, the
	// connector's idempotency_key argument) names the message: sent again
	// with the same key, it answers the turn the first send created
	// instead of starting another.
	IdempotencyKey string
	// KeyField names the key in a refusal of a bad one (the client's own
	// name for it): Idempotency-Key when empty.
	KeyField string
}

// Started is a turn that a message started.
type Started struct {
	TurnID    string
	SessionID string
	CompanyID string
	Status    models.TurnStatus
}

// SendMessage starts a turn of the company's agent with the message and
// returns at once. Refusals, in order: the company is missing or archived
// (not_found) or another account's (forbidden); its agent does not take
// messages (forbidden, agent_chat false); it is not provisioned yet
// (business_not_active); the plan does not allow agent work (plan_…);
// the balance is under MinCreditsToStartTurn (insufficient_credits); the
// message is invalid (invalid_argument); a turn runs (conflict, with its
// turn_id).
//
// With an idempotency key, a message the company sent already with that
// key answers the turn it created, as it is now, whatever runs and
// whatever the refusals above would say today (its first send was
// taken); the key with another message is a conflict
// (idempotency_key_reused). Concurrent sends with one key create one turn.
func (s *Service) SendMessage(ctx context.Context, companyID string, m Message) (Started, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Started{}, err
	}
	field := cmp.Or(m.KeyField, "Idempotency-Key")
	if m.IdempotencyKey != "" {
		if _, err := service.RequestCall(ac.ID, "send_message", m.IdempotencyKey, field); err != nil {
			return Started{}, err
		}
	}
	text := strings.TrimSpace(m.Text)
	if err := service.CheckText(m.Text, true); err != nil {
		return Started{}, err.WithField("message")
	}
	if text == "" {
		return Started{}, models.Errorf(models.CodeInvalidArgument, "The message is empty.").WithField("message")
	}
	if n := len([]rune(text)); n > MaxMessageChars {
		return Started{}, models.Errorf(models.CodeInvalidArgument, "The message has %d characters; at most %d are allowed.", n, MaxMessageChars).WithField("message")
	}
	if len(m.Attachments) > MaxAttachments {
		return Started{}, models.Errorf(models.CodeInvalidArgument, "At most %d files can be attached to a message.", MaxAttachments).WithField("attachments")
	}
	if m.IdempotencyKey != "" {
		t, err := s.store.Turns().TurnByIdempotencyKey(ctx, ac.Scope, m.IdempotencyKey)
		if err == nil {
			return replayed(ac, t, text, m.Attachments, field)
		}
		if !errors.Is(err, models.ErrNotFound) {
			return Started{}, err
		}
	}
	if ac.ChatDisabled {
		return Started{}, models.Errorf(models.CodeForbidden, "The agent of %s does not take messages (agent_chat is off); turn it on in the company's settings.", ac.Name).With("agent_chat", false)
	}
	if err := s.canWork(ctx, ac, false); err != nil {
		return Started{}, err
	}
	var attached []string
	for i, id := range m.Attachments {
		f, err := s.files.Get(ctx, ac.ID, id)
		if err != nil {
			var de *models.Error
			if errors.As(err, &de) {
				return Started{}, de.WithField(fmt.Sprintf("attachments[%d]", i))
			}
			return Started{}, err
		}
		attached = append(attached, fmt.Sprintf("- %s (file id %s, %d bytes, %s)", f.Path, f.ID, f.SizeBytes, f.ContentType))
	}
	session, err := s.session(ctx, ac, m.SessionID)
	if err != nil {
		return Started{}, err
	}
	content := text
	if len(attached) > 0 {
		content += "\n\nAttached files (read them with read_file):\n" + strings.Join(attached, "\n")
	}
	t := models.Turn{SessionID: session, Trigger: models.TriggerMessage, Message: text, Attachments: append([]string{}, m.Attachments...)}
	if m.IdempotencyKey != "" {
		t.IdempotencyKey = &m.IdempotencyKey
	}
	t, err = s.start(ctx, ac, t, content)
	if errors.Is(err, store.ErrTurnKeyExists) {
		// A concurrent send with the same key created it first.
		return replayed(ac, t, text, m.Attachments, field)
	}
	if err != nil {
		return Started{}, err
	}
	return Started{TurnID: t.ID, SessionID: t.SessionID, CompanyID: ac.ID, Status: t.Status}, nil
}

// replayed answers a message sent again with its idempotency key: the
// turn the first send created, when it was the same message.
func replayed(ac service.AuthorizedCompany, t models.Turn, text string, attachments []string, field string) (Started, error) {
	if t.Message != text || !slices.Equal(t.Attachments, attachments) {
		return Started{}, models.Errorf(models.CodeConflict,
			"This %s was used for another message; use a new key for a new message.", field).With("reason", "idempotency_key_reused")
	}
	return Started{TurnID: t.ID, SessionID: t.SessionID, CompanyID: ac.ID, Status: t.Status}, nil
}

// canWork checks what every turn needs but the message: a provisioned
// company, a plan that allows agent work and, unless skipped (an
// operator's run), the minimum balance.
func (s *Service) canWork(ctx context.Context, ac service.AuthorizedCompany, skipCredits bool) error {
	ready, err := s.store.Turns().CompanyReady(ctx, ac.Scope)
	if err != nil {
		return err
	}
	if !ready {
		return models.Errorf(models.CodeBusinessNotActive, "%s is still being set up (about a minute); try again once it is ready.", ac.Name)
	}
	if skipCredits {
		return nil
	}
	cong, err := s.store.Identity().GetConglomerate(ctx, ac.ConglomerateID)
	if err != nil {
		return err
	}
	if perr := s.billing.PlanDecision(cong, billing.ActionAgentWork); perr != nil {
		return perr
	}
	bal, err := s.store.Companies().CompanyAccountCredits(ctx, ac.Scope, s.now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return err
	}
	if bal.Balance < billing.MinCreditsToStartTurn {
		return s.billing.InsufficientCredits(cong, bal.Balance, billing.MinCreditsToStartTurn)
	}
	return nil
}

// session picks the turn's session: the one asked for (a session of this
// company), else the session of a turn waiting for an answer, else a new one.
func (s *Service) session(ctx context.Context, ac service.AuthorizedCompany, asked string) (string, error) {
	if asked != "" {
		id, err := uuid.Parse(asked)
		if err != nil {
			return "", models.Errorf(models.CodeInvalidArgument, "session_id is not a UUID.").WithField("session_id")
		}
		ok, err := s.store.Turns().SessionExists(ctx, ac.Scope, id.String())
		if err != nil {
			return "", err
		}
		if !ok {
			return "", models.Errorf(models.CodeNotFound, "Session %s is not a conversation of this company.", id).WithField("session_id")
		}
		return id.String(), nil
	}
	last, err := s.store.Turns().LatestTurn(ctx, ac.Scope, false)
	switch {
	case errors.Is(err, models.ErrNotFound):
	case err != nil:
		return "", err
	case last.Status == models.TurnWaiting:
		return last.SessionID, nil
	}
	return uuid.NewString(), nil
}

// start stores the queued turn with its first message and answers once it
// is committed; its workflow is started right after, apart from the
// caller (launch). The row is the lock and the outbox: a company with a
// queued or running turn gets conflict with that turn's id (nothing
// stored), and a turn whose start a crash or a Temporal outage lost is
// started by the worker's sweeper. A turn whose idempotency key the company
// used already is not stored: the stored one is returned with
// store.ErrTurnKeyExists.
func (s *Service) start(ctx context.Context, ac service.AuthorizedCompany, t models.Turn, content string) (models.Turn, error) {
	if s.temporal == nil {
		return t, models.Errorf(models.CodeUpstreamUnavailable, "Agent turns are not available on this server.")
	}
	t, err := s.store.Turns().CreateTurn(ctx, ac.Scope, t, []models.ContentBlock{{Type: models.ContentText, Text: content}})
	if errors.Is(err, store.ErrTurnActive) {
		return models.Turn{}, models.Errorf(models.CodeConflict, "A turn of %s's agent is running; wait for it to end (poll get_turn) or interrupt it.", ac.Name).
			With("turn_id", t.ID)
	}
	if err != nil {
		return t, err
	}
	s.launch(ctx, t)
	return t, nil
}

// launch starts the turn's workflow apart from the request that stored it
// (startTurn); what fails is left to the sweeper, which starts queued
// turns that no workflow picked up.
func (s *Service) launch(ctx context.Context, t models.Turn) {
	ctx = context.WithoutCancel(ctx)
	s.launches.add()
	go func() {
		defer s.launches.done()
		err := startTurn(ctx, s.temporal, t, closeWait)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if err != nil && (!errors.As(err, &started) || RunningTurnID(ctx, s.temporal, t.CompanyID) != t.ID) {
			s.logger.WarnContext(ctx, "turn: workflow not started; the sweeper starts it", "turn", t.ID, "company", t.CompanyID, "error", err)
		}
	}()
}

// startTurn starts the turn's workflow. When the company's workflow id is
// still taken by the turn before (its row has ended, its workflow is
// closing) it waits for that one to close, wait at most, and starts again,
// once.
func startTurn(ctx context.Context, tc client.Client, t models.Turn, wait time.Duration) error {
	err := startWorkflow(ctx, tc, t)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) && closed(ctx, tc, t, wait) {
		err = startWorkflow(ctx, tc, t)
	}
	return err
}

// closed waits (wait at most) for the company's workflow to close when it
// runs a turn other than t, and reports whether it closed.
func closed(ctx context.Context, tc client.Client, t models.Turn, wait time.Duration) bool {
	if wait <= 0 {
		return false
	}
	if RunningTurnID(ctx, tc, t.CompanyID) == t.ID {
		return false // t's own (another start won)
	}
	wctx, cancel := context.WithTimeout(ctx, bounds.Of(wait))
	defer cancel()
	_ = tc.GetWorkflow(wctx, contract.TurnWorkflowID(t.CompanyID), "").Get(wctx, nil)
	return wctx.Err() == nil
}

// Close waits for the workflow starts under way (or until ctx is done):
// at a process's shutdown, before the Temporal client closes.
func (s *Service) Close(ctx context.Context) {
	select {
	case <-s.launches.idle():
	case <-ctx.Done():
	}
}

// inFlight counts work under way; idle's channel closes when none is. It
// may be waited on while new work starts (unlike a sync.WaitGroup).
type inFlight struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{}
}

func (f *inFlight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		for _, w := range f.waiters {
			close(w)
		}
		f.waiters = nil
	}
}

func (f *inFlight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.n == 0 {
		close(ch)
	} else {
		f.waiters = append(f.waiters, ch)
	}
	return ch
}

// memoTurnID is the memo field naming the turn a workflow runs.
const memoTurnID = "turn_id"

// RunningTurnID is the id of the turn the company's turn workflow runs, ""
// when none runs (or Temporal does not answer).
func RunningTurnID(ctx context.Context, tc client.Client, companyID string) string {
	id, _, _ := workflowTurn(ctx, tc, companyID)
	return id
}

// workflowTurn describes the company's turn workflow: whether it runs and
// the turn it runs ("" when its memo does not say). An error is Temporal's
// answer other than "no such workflow".
func workflowTurn(ctx context.Context, tc client.Client, companyID string) (turnID string, running bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	d, err := tc.DescribeWorkflowExecution(ctx, contract.TurnWorkflowID(companyID), "")
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", false, nil
	}
	p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[memoTurnID]
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &turnID) != nil {
		return "", true, nil
	}
	return turnID, true, nil
}

func startWorkflow(ctx context.Context, tc client.Client, t models.Turn) error {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       contract.TurnWorkflowID(t.CompanyID),
		TaskQueue:                                contract.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		// A worker of this process (holdco serve runs both roles) takes
		// the first workflow task from the start's answer instead of
		// through the task queue; with none, the start is as usual.
		EnableEagerStart: true,
		Memo:             map[string]any{memoTurnID: t.ID},
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet(t.CompanyID),
			contract.ConglomerateIDKey.ValueSet(t.ConglomerateID)),
	}, contract.TurnWorkflowName, contract.TurnInput{TurnID: t.ID, CompanyID: t.CompanyID, ConglomerateID: t.ConglomerateID})
	return err
}

// View is a turn as its readers see it.
type View struct {
	models.Turn
	ElapsedSeconds float64
}

func (s *Service) view(t models.Turn) View {
	v := View{Turn: t, ElapsedSeconds: t.Elapsed(s.now()).Round(100 * time.Millisecond).Seconds()}
	if t.Status.Active() {
		v.CreditsCost = nil // reported once the turn ended
	}
	return v
}

// authorizeTurn finds a turn's company and applies the ownership rule: an
// unknown turn is not_found, another account's forbidden.
func (s *Service) authorizeTurn(ctx context.Context, turnID string) (service.AuthorizedCompany, models.Turn, error) {
	id, err := uuid.Parse(turnID)
	if err != nil {
		return service.AuthorizedCompany{}, models.Turn{}, models.Errorf(models.CodeInvalidArgument, "The turn id is not a UUID.").WithField("turn_id")
	}
	companyID, err := s.store.Turns().TurnCompanyID(ctx, id.String())
	if errors.Is(err, models.ErrNotFound) {
		return service.AuthorizedCompany{}, models.Turn{}, models.Errorf(models.CodeNotFound, "Turn %s does not exist.", id)
	}
	if err != nil {
		return service.AuthorizedCompany{}, models.Turn{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		var de *models.Error
		if errors.As(err, &de) && de.Code == models.CodeForbidden {
			return ac, models.Turn{}, models.Errorf(models.CodeForbidden, "Turn %s belongs to another account.", id)
		}
		return ac, models.Turn{}, err
	}
	t, err := s.store.Turns().GetTurn(ctx, ac.Scope, id.String())
	if errors.Is(err, models.ErrNotFound) {
		return ac, t, models.Errorf(models.CodeNotFound, "Turn %s does not exist.", id)
	}
	return ac, t, err
}

// GetTurn returns a turn: status, elapsed seconds, the agent's text so
// far, the answer, the question of a waiting turn and, once it ended, what
// it cost.
func (s *Service) GetTurn(ctx context.Context, turnID string) (View, error) {
	_, t, err := s.authorizeTurn(ctx, turnID)
	if err != nil {
		return View{}, err
	}
	return s.view(t), nil
}

// InterruptTurn stops a running turn: the model or tool call in flight is
// cancelled and the turn ends interrupted. It answers the turn as it then
// is; a turn that has ended already is answered unchanged (a no-op, not an
// error).
func (s *Service) InterruptTurn(ctx context.Context, turnID string) (View, error) {
	ac, t, err := s.authorizeTurn(ctx, turnID)
	if err != nil || !t.Status.Active() {
		return s.view(t), err
	}
	if s.temporal == nil {
		return View{}, models.Errorf(models.CodeUpstreamUnavailable, "Agent turns are not available on this server.")
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bounds.Of(interruptWait))
	defer cancel()
	// An update that lands as the workflow continues as new is answered
	// by the old run with the turn still running: it is sent again to the
	// new run.
	for attempt := 0; attempt < 3; attempt++ {
		h, err := s.temporal.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
			WorkflowID: contract.TurnWorkflowID(ac.ID), UpdateName: contract.UpdateInterrupt,
			Args: []any{t.ID}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		var st contract.TurnState
		if err == nil {
			err = h.Get(uctx, &st)
		}
		if uctx.Err() != nil {
			return View{}, models.Errorf(models.CodeUpstreamUnavailable, "The turn did not stop in time; try again.")
		}
		if err != nil {
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				// Refused by the validator (not the running turn): the
				// row decides below.
				s.logger.InfoContext(ctx, "turn interrupt: update refused", "turn", t.ID, "error", err)
			}
			break
		}
		if !st.Status.Active() {
			break
		}
	}
	cur, err := s.store.Turns().GetTurn(ctx, ac.Scope, t.ID)
	if err != nil {
		return View{}, err
	}
	if cur.Status == models.TurnQueued {
		// No workflow runs it (a start lost in a crash): it ends here.
		var ended bool
		cur, ended, err = s.store.Turns().FinishTurn(ctx, ac.Scope, t.ID, cur.Text, models.TurnResult{Status: models.TurnInterrupted, EndedAt: s.now().UTC()},
			models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: service.ActorOf(ctx), Summary: "A turn of the agent was interrupted"})
		if err != nil {
			return View{}, err
		}
		if ended {
			observability.TurnEnded(string(cur.Status))
		}
	}
	return s.view(cur), nil
}

// Page is a page of a company's turns, newest first.
type Page struct {
	Turns []View
	// Next is the cursor of the following page ("" at the end).
	Next string
}

// ListTurns returns the company's turns newest first; limit 1–100, before
// a cursor from an earlier page.
func (s *Service) ListTurns(ctx context.Context, companyID string, limit int, before string) (Page, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return Page{}, err
	}
	if limit < 1 || limit > 100 {
		return Page{}, models.Errorf(models.CodeInvalidArgument, "limit must be from 1 to 100.").WithField("limit")
	}
	var cur *store.TurnCursor
	if before != "" {
		id, err := uuid.Parse(before)
		if err != nil {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "before must be a turn id from an earlier page.").WithField("before")
		}
		t, err := s.store.Turns().GetTurn(ctx, ac.Scope, id.String())
		if err != nil {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "before must be a turn id of this company.").WithField("before")
		}
		cur = &store.TurnCursor{CreatedAt: t.CreatedAt, ID: t.ID}
	}
	turns, err := s.store.Turns().ListTurns(ctx, ac.Scope, cur, limit+1)
	if err != nil {
		return Page{}, err
	}
	p := Page{Turns: []View{}}
	for i, t := range turns {
		if i == limit {
			p.Next = turns[limit-1].ID
			break
		}
		p.Turns = append(p.Turns, s.view(t))
	}
	return p, nil
}

func newSession() string { return uuid.NewString() }
