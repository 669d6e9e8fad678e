package turns

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/service"
	"holdco/store"
	"holdco/workflows/contract"
)

// Schedules keeps each active company's Temporal Schedule of agent runs:
// made when provisioning is ready (not for a paused company: activating it
// makes it), paused with the company, deleted when it is archived. Every 0 turns scheduled runs off (every call is a no-op).
// A scheduled run checks the company again before it starts a turn, so a
// schedule left behind by a crash only starts a run that skips.
type Schedules struct {
	Temporal client.Client
	Every    time.Duration
}

func (s *Schedules) off() bool { return s == nil || s.Temporal == nil || s.Every <= 0 }

// scheduleBound bounds one schedule change, retries included (tests scale
// it: bounds.Of; a variable only so that a test can shorten it).
var scheduleBound = 30 * time.Second

// retryTransient runs an idempotent schedule call until it succeeds, fails
// for a reason other than a slow or briefly unavailable server, or
// scheduleBound has passed. The SDK gives each call at most 10 s, whatever
// the context allows, and one slow answer must not leave a paused
// company's schedule running.
func retryTransient(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(scheduleBound))
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		err := call(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// transient reports a call that ran out of its own time, found the server
// unavailable or busy, or the schedule's workflow not ready; trying it
// again may succeed.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var unavailable *serviceerror.Unavailable
	var exhausted *serviceerror.ResourceExhausted
	var deadline *serviceerror.DeadlineExceeded
	var notReady *serviceerror.WorkflowNotReady // the scheduler workflow's task is being retried
	return errors.As(err, &unavailable) || errors.As(err, &exhausted) || errors.As(err, &deadline) || errors.As(err, &notReady)
}

// Ensure creates the company's schedule unless it exists; paused creates
// it paused.
func (s *Schedules) Ensure(ctx context.Context, companyID, conglomerateID string, paused bool) error {
	if s.off() {
		return nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(companyID))
	offset := time.Duration(h.Sum64() % uint64(s.Every)) // spread companies over the period
	opts := client.ScheduleOptions{
		ID:      contract.AgentScheduleID(companyID),
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every, Offset: offset}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Paused:  paused,
		Action: &client.ScheduleWorkflowAction{
			ID: "scheduled-run:" + companyID, Workflow: contract.ScheduledRunWorkflowName, TaskQueue: contract.TaskQueue,
			Args: []any{contract.ScheduledRunInput{CompanyID: companyID}},
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet(companyID),
				contract.ConglomerateIDKey.ValueSet(conglomerateID)),
		},
	}
	err := retryTransient(ctx, func(ctx context.Context) error {
		_, err := s.Temporal.ScheduleClient().Create(ctx, opts)
		return err
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil
	}
	return err
}

// Pause stops the company's scheduled runs (messages still work).
func (s *Schedules) Pause(ctx context.Context, companyID string) error {
	if s.off() {
		return nil
	}
	return ignoreMissing(retryTransient(ctx, func(ctx context.Context) error {
		return s.Temporal.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(companyID)).
			Pause(ctx, client.SchedulePauseOptions{Note: "company paused"})
	}))
}

// Resume starts the company's scheduled runs again; a company that never
// had a schedule (provisioned while paused) gets one.
func (s *Schedules) Resume(ctx context.Context, companyID, conglomerateID string) error {
	if s.off() {
		return nil
	}
	err := retryTransient(ctx, func(ctx context.Context) error {
		return s.Temporal.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(companyID)).
			Unpause(ctx, client.ScheduleUnpauseOptions{Note: "company activated"})
	})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return s.Ensure(ctx, companyID, conglomerateID, false)
	}
	return err
}

// Delete removes the company's schedule (archive).
func (s *Schedules) Delete(ctx context.Context, companyID string) error {
	if s.off() {
		return nil
	}
	return ignoreMissing(retryTransient(ctx, func(ctx context.Context) error {
		return s.Temporal.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(companyID)).Delete(ctx)
	}))
}

func ignoreMissing(err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// StartScheduledRun starts the company's scheduled turn, unless the company
// is paused or archived, not ready, its plan or balance does not allow
// agent work, or a turn runs: then it says why it skipped. It is a rule for
// the worker, which passes the company's scope.
func (s *Service) StartScheduledRun(ctx context.Context, scope store.CompanyScope) (contract.ScheduledRunResult, error) {
	c, err := s.store.Companies().GetCompany(ctx, scope)
	if errors.Is(err, models.ErrNotFound) {
		return contract.ScheduledRunResult{Skipped: "the company no longer exists"}, nil
	}
	if err != nil {
		return contract.ScheduledRunResult{}, err
	}
	if c.Status != models.CompanyActive {
		return contract.ScheduledRunResult{Skipped: "the company is " + string(c.Status)}, nil
	}
	ac := service.AuthorizedCompany{Company: c, Scope: scope}
	if err := s.canWork(ctx, ac, false); err != nil {
		return contract.ScheduledRunResult{Skipped: skipReason(err)}, nil
	}
	msg := "Scheduled run: review the company's open tasks, documents and inbox, and make progress on what matters most."
	t, err := s.start(ctx, ac, models.Turn{SessionID: newSession(), Trigger: models.TriggerSchedule, Message: msg}, msg)
	if err != nil {
		if models.IsCode(err, models.CodeConflict) {
			return contract.ScheduledRunResult{Skipped: "a turn is running"}, nil
		}
		return contract.ScheduledRunResult{}, err
	}
	return contract.ScheduledRunResult{TurnID: t.ID}, nil
}

// skipReason is the refusal's code (never its detail, which may name the
// company): the reason lands in the workflow's result and the worker log.
func skipReason(err error) string {
	var de *models.Error
	if errors.As(err, &de) {
		return string(de.Code)
	}
	return "error"
}
