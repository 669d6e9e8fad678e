package founding

import (
	"context"
	"errors"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
	"holdco/workflows/contract"
)

// SegmentStaleAfter is how old the interviewer's heartbeat may be for its
// claim to count as live (segment_running).
const SegmentStaleAfter = 30 * time.Second

// Timeouts of the interview's Temporal calls.
const (
	startTimeout  = 5 * time.Second
	answerTimeout = 30 * time.Second
)

// StartInput opens a founding interview.
type StartInput struct {
	Idea string
	// AnalyticsSessionID and ClientMobile describe the client (optional;
	// kept on the row for product analytics).
	AnalyticsSessionID string
	ClientMobile       *bool
}

// Interview is an interview as its founder reads it.
type Interview struct {
	models.FoundingInterview
	// SegmentLive: the interviewer's claim is held and heartbeating.
	SegmentLive bool
}

func (s *Service) view(f models.FoundingInterview) Interview {
	return Interview{FoundingInterview: f, SegmentLive: f.SegmentLive(s.now(), SegmentStaleAfter)}
}

// StartFounding opens the caller's founding interview in naming with the
// idea and starts its workflow (founding:<user_id>). Gates, in order: the
// idea (checkIdea), the plan (plan_*), the founding caps (an open
// interview: conflict with its interview_id; more than InterviewsPerDay
// interviews in 24 hours: rate_limited; the account's business limit) and
// the platform's company cap (business_limit_reached). No credit gate: the
// interviewer's calls are not charged.
func (s *Service) StartFounding(ctx context.Context, in StartInput) (Interview, error) {
	p, v, err := s.userAccount(ctx)
	if err != nil {
		return Interview{}, err
	}
	idea, err := s.checkIdea(in.Idea)
	if err != nil {
		return Interview{}, err
	}
	if err := checkClient(in.AnalyticsSessionID); err != nil {
		return Interview{}, err
	}
	if e := s.billing.PlanDecision(v.Conglomerate, billing.ActionStartBusiness); e != nil {
		return Interview{}, e
	}
	if err := s.foundingCaps(ctx, p, v); err != nil {
		return Interview{}, err
	}
	if err := s.companies.CheckBusinessLimit(ctx, v); err != nil {
		return Interview{}, err
	}
	return s.open(ctx, p, v, models.FoundingInterview{Kind: models.FoundingNew, Idea: idea, AnalyticsSessionID: in.AnalyticsSessionID,
		ClientMobile: in.ClientMobile}, ideaLine(models.FoundingNew, nil, idea))
}

func (s *Service) userAccount(ctx context.Context) (service.Principal, service.ConglomerateView, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return p, service.ConglomerateView{}, err
	}
	v, err := s.core.AuthorizeConglomerate(ctx, p.ConglomerateID)
	return p, v, err
}

// checkClient checks the optional analytics session id: up to 128
// visible ASCII characters.
func checkClient(sessionID string) error {
	if len(sessionID) > 128 || strings.IndexFunc(sessionID, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return models.Errorf(models.CodeInvalidArgument, "X-Analytics-Session-Id is up to 128 visible ASCII characters.").WithField("X-Analytics-Session-Id")
	}
	return nil
}

// foundingCaps: one open interview per user, InterviewsPerDay per account.
func (s *Service) foundingCaps(ctx context.Context, p service.Principal, v service.ConglomerateView) error {
	if open, err := s.store.Founding().OpenFoundingInterview(ctx, v.Scope, p.UserID); err == nil {
		return models.Errorf(models.CodeConflict, "A founding interview is open; answer it or withdraw it first.").With("interview_id", open.ID)
	} else if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	n, err := s.store.Founding().CountFoundingInterviewsSince(ctx, v.Scope, s.now().Add(-24*time.Hour))
	if err != nil {
		return err
	}
	if n >= s.limits.InterviewsPerDay {
		return models.Errorf(models.CodeRateLimited, "This account opened %d founding interviews in the last 24 hours, its limit; try again tomorrow.", n).
			With("limit", s.limits.InterviewsPerDay)
	}
	return nil
}

// open stores the interview (the row is the outbox of its workflow) and
// starts the workflow; a start that fails is left to the sweeper.
func (s *Service) open(ctx context.Context, p service.Principal, v service.ConglomerateView, f models.FoundingInterview, first string) (Interview, error) {
	if s.temporal == nil {
		return Interview{}, models.Errorf(models.CodeUpstreamUnavailable, "Founding interviews are not available on this server.")
	}
	at := s.now()
	f.UserID, f.State = p.UserID, models.FoundingNaming
	f.SegmentRunning, f.SegmentHeartbeatAt = true, &at // the interviewer's first question is on its way
	f.Transcript = []models.FoundingEntry{{Role: models.RoleFounder, Kind: models.EntryIdea, Text: first, At: at}}
	f, err := s.store.Founding().CreateFoundingInterview(ctx, v.Scope, f)
	if errors.Is(err, models.ErrDuplicate) {
		return Interview{}, models.Errorf(models.CodeConflict, "A founding interview is open; answer it or withdraw it first.")
	}
	if err != nil {
		return Interview{}, err
	}
	if err := StartInterviewWorkflow(context.WithoutCancel(ctx), s.store, s.temporal, v.Scope, f); err != nil {
		s.logger.WarnContext(ctx, "founding interview not started; the worker's sweeper will start it", "interview", f.ID, "error", err)
	}
	return s.view(f), nil
}

// memoInterviewID names the interview a founding workflow runs.
const memoInterviewID = "interview_id"

// StartInterviewWorkflow starts an open interview's workflow and marks the
// row started. A workflow already running for this interview counts as
// started; one still running for the user's previous interview (it is
// closing) is an error, retried by the sweeper.
func StartInterviewWorkflow(ctx context.Context, st *store.Store, tc client.Client, cong store.ConglomerateScope, f models.FoundingInterview) error {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       contract.FoundingWorkflowID(f.UserID),
		TaskQueue:                                contract.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{memoInterviewID: f.ID},
		TypedSearchAttributes:                    temporal.NewSearchAttributes(contract.ConglomerateIDKey.ValueSet(f.ConglomerateID)),
	}, contract.FoundingWorkflowName, contract.FoundingInput{InterviewID: f.ID, UserID: f.UserID, ConglomerateID: f.ConglomerateID, Kind: f.Kind})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) && runningInterview(ctx, tc, f.UserID) == f.ID {
		err = nil
	}
	if err != nil {
		return err
	}
	return st.Founding().MarkFoundingWorkflowStarted(ctx, cong, f.ID, time.Now().UTC())
}

// runningInterview is the interview id the user's running founding
// workflow works on ("" when none runs).
func runningInterview(ctx context.Context, tc client.Client, userID string) string {
	d, err := tc.DescribeWorkflowExecution(ctx, contract.FoundingWorkflowID(userID), "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return ""
	}
	var id string
	if p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[memoInterviewID]; p == nil || converter.GetDefaultDataConverter().FromPayload(p, &id) != nil {
		return ""
	}
	return id
}

// CurrentFounding is the caller's open interview, else their most recent
// one (founded or rejected); not_found when they never had one.
func (s *Service) CurrentFounding(ctx context.Context) (Interview, error) {
	p, v, err := s.userAccount(ctx)
	if err != nil {
		return Interview{}, err
	}
	f, err := s.store.Founding().OpenFoundingInterview(ctx, v.Scope, p.UserID)
	if errors.Is(err, models.ErrNotFound) {
		f, err = s.store.Founding().LatestFoundingInterview(ctx, v.Scope, p.UserID)
	}
	if errors.Is(err, models.ErrNotFound) {
		return Interview{}, models.Errorf(models.CodeNotFound, "No founding interview yet; start one with POST /founding.")
	}
	if err != nil {
		return Interview{}, err
	}
	return s.view(f), nil
}

// AnswerInput is the founder's answer to the open interview.
type AnswerInput struct {
	// Action is answer (default), accept or withdraw.
	Action string
	Text   string
	// Handle (optional, accept only) is the handle the founder chose
	// instead of the proposal's, normalized as CheckHandle does.
	Handle string
}

// Answer sends the founder's answer to the open interview as an Update of
// its workflow and returns the interview once the answer is recorded (the
// interviewer then works: segment_running). Refusals: no open interview
// (not_found); an answer that is empty, too long or not text, or an
// unknown action (invalid_argument); the interviewer still working, an
// accept without a proposal, or an interview being founded (conflict).
//
// An accept may carry the founder's handle (AnswerInput.Handle) instead
// of the proposal's: normalized as CheckHandle does, refused when
// CheckHandle refuses it or with another action (invalid_argument, field
// handle) and on a v3 upgrade (the company keeps its handle); taken now,
// it is handle_taken with suggested_handle and nothing changes. Taken by
// someone else between the accept and the founding step, the next free
// one is used, as for the proposal's (see Found).
func (s *Service) Answer(ctx context.Context, in AnswerInput) (Interview, error) {
	p, v, err := s.userAccount(ctx)
	if err != nil {
		return Interview{}, err
	}
	a, err := checkAnswer(in)
	if err != nil {
		return Interview{}, err
	}
	f, err := s.store.Founding().OpenFoundingInterview(ctx, v.Scope, p.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return Interview{}, models.Errorf(models.CodeNotFound, "No founding interview is open; start one with POST /founding.")
	}
	if err != nil {
		return Interview{}, err
	}
	if a.Handle != "" {
		if err := s.checkChosenHandle(ctx, f, a.Handle); err != nil {
			return Interview{}, err
		}
	}
	if s.temporal == nil {
		return Interview{}, models.Errorf(models.CodeUpstreamUnavailable, "Founding interviews are not available on this server.")
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bounds.Of(answerTimeout))
	defer cancel()
	for attempt := 0; ; attempt++ {
		err = s.sendAnswer(uctx, p.UserID, a)
		if err == nil || !isBusy(err) || attempt >= busyRetries {
			break
		}
		// The row may show the interviewer done a moment before the
		// workflow took the result: retry while the row says so.
		cur, rerr := s.store.Founding().FoundingInterview(ctx, v.Scope, f.ID)
		if rerr != nil || cur.SegmentRunning || !cur.State.Open() {
			break
		}
		select {
		case <-uctx.Done():
		case <-time.After(busyRetryEvery):
		}
	}
	if err != nil {
		return Interview{}, answerError(err)
	}
	f, err = s.store.Founding().FoundingInterview(ctx, v.Scope, f.ID)
	if err != nil {
		return Interview{}, err
	}
	return s.view(f), nil
}

// Retries of an answer that met the workflow busy while the row says the
// interviewer is done.
const (
	busyRetries    = 30
	busyRetryEvery = 100 * time.Millisecond
)

func (s *Service) sendAnswer(ctx context.Context, userID string, a contract.FoundingAnswer) error {
	h, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: contract.FoundingWorkflowID(userID),
		UpdateName: contract.UpdateFoundingAnswer, Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	var st contract.FoundingStatus
	return h.Get(ctx, &st)
}

func isBusy(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == contract.FoundingErrBusy
}

// checkAnswer is the answer's own rule (the validator checks it again
// against the interview's state).
func checkAnswer(in AnswerInput) (contract.FoundingAnswer, error) {
	a := contract.FoundingAnswer{Action: in.Action, Text: strings.TrimSpace(in.Text)}
	if a.Action == "" {
		a.Action = contract.FoundingActionAnswer
	}
	if msg := contract.ValidateFoundingAnswer(a); msg != "" {
		field := "answer"
		if a.Action != contract.FoundingActionAnswer && a.Action != contract.FoundingActionAccept && a.Action != contract.FoundingActionWithdraw {
			field = "action"
		}
		return a, models.Errorf(models.CodeInvalidArgument, "%s", msg).WithField(field)
	}
	if in.Handle == "" {
		return a, nil
	}
	if a.Action != contract.FoundingActionAccept {
		return a, models.Errorf(models.CodeInvalidArgument, "A handle comes only with action accept (the handle to found the proposal with).").WithField("handle")
	}
	h, err := normalizeHandle(in.Handle)
	if err != nil {
		return a, err
	}
	a.Handle = h
	if msg := contract.ValidateFoundingAnswer(a); msg != "" {
		return a, models.Errorf(models.CodeInvalidArgument, "%s", msg).WithField("handle")
	}
	return a, nil
}

// checkChosenHandle refuses the founder's handle for the open interview f:
// on a v3 upgrade (invalid_argument) or when it is taken now
// (handle_taken with suggested_handle). An accept the workflow would
// refuse anyway (no proposal yet) is left to its answer.
func (s *Service) checkChosenHandle(ctx context.Context, f models.FoundingInterview, handle string) error {
	if f.Kind == models.FoundingV3Upgrade {
		return models.Errorf(models.CodeInvalidArgument, "An upgrade keeps the company's handle; accept without one.").WithField("handle")
	}
	if f.State != models.FoundingReviewing {
		return nil
	}
	taken, err := s.store.Companies().HandleTaken(ctx, handle)
	if err != nil || !taken {
		return err
	}
	suggestion, err := s.companies.SuggestHandle(ctx, handle)
	if err != nil {
		return err
	}
	return models.Errorf(models.CodeHandleTaken, "The handle %q is taken; %q is free.", handle, suggestion).
		WithField("handle").With("suggested_handle", suggestion)
}

// answerError maps a refused or failed update to the service's errors.
func answerError(err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case contract.FoundingErrConflict, contract.FoundingErrBusy:
			return models.Errorf(models.CodeConflict, "%s", appErr.Message())
		case contract.FoundingErrInvalid:
			return models.Errorf(models.CodeInvalidArgument, "%s", appErr.Message()).WithField("answer")
		}
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return models.Errorf(models.CodeConflict, "The interview is starting; answer again in a few seconds.")
	}
	return models.Errorf(models.CodeUpstreamUnavailable, "The answer could not be delivered; retry shortly.").Wrap(err)
}
