package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows/contract"
)

// interviewerActivity is a model call of the interviewer: heartbeating, so
// a dead worker is noticed and the segment retried elsewhere.
var interviewerActivity = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Minute,
	HeartbeatTimeout:    15 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		MaximumAttempts:        6,
		NonRetryableErrorTypes: []string{contract.ErrInterviewerFailed},
	},
}

// interviewBookkeeping writes the interview's row (answers, founding,
// rejection): database work, retried until it lands.
var interviewBookkeeping = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
	},
}

// foundingWorkflow is one founding (or v3 upgrade) interview: its state,
// the handlers that read it and take answers, and the loop that runs the
// interviewer and founds.
type foundingWorkflow struct {
	in     contract.FoundingInput
	ref    contract.InterviewRef
	status contract.FoundingStatus
	// answers recorded by the update handler, waiting for the loop.
	pending []contract.FoundingAnswer
	// recording: an answer is being written to the row.
	recording bool
}

// Founding runs an interview: the interviewer asks (a model call per
// answer) until it proposes the company or rejects the idea; the founder
// answers with Updates, accepts a proposal (the company is founded) or
// withdraws. An interview nobody answers for IdleTimeout is rejected. The
// transcript lives in the row; the history holds only ids, states and the
// answers' texts.
func Founding(ctx workflow.Context, in contract.FoundingInput) (contract.FoundingStatus, error) {
	w := &foundingWorkflow{in: in, ref: contract.InterviewRef{InterviewID: in.InterviewID, ConglomerateID: in.ConglomerateID},
		status: contract.FoundingStatus{InterviewID: in.InterviewID, State: models.FoundingNaming, Busy: true}}
	if err := workflow.SetQueryHandler(ctx, contract.QueryFoundingState, func() (contract.FoundingStatus, error) { return w.status, nil }); err != nil {
		return w.status, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateFoundingAnswer, w.answer,
		workflow.UpdateHandlerOptions{Validator: w.validate}); err != nil {
		return w.status, err
	}
	err := w.run(ctx)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return w.status, err
}

// validate refuses, before anything is written to the history, an answer
// that breaks the answer rule, arrives while the interviewer works or the
// company is being founded, or accepts without a proposal.
func (w *foundingWorkflow) validate(_ workflow.Context, a contract.FoundingAnswer) error {
	if msg := contract.ValidateFoundingAnswer(a); msg != "" {
		return temporal.NewApplicationError(msg, contract.FoundingErrInvalid)
	}
	switch {
	case !w.status.State.Open():
		return temporal.NewApplicationError(fmt.Sprintf("The interview has ended (%s).", w.status.State), contract.FoundingErrConflict)
	case w.status.State == models.FoundingFounding:
		return temporal.NewApplicationError("The company is being founded; wait for it.", contract.FoundingErrConflict)
	case w.status.Busy || w.recording || len(w.pending) > 0:
		return temporal.NewApplicationError("The interviewer is still answering; wait for its question.", contract.FoundingErrBusy)
	case a.Action == contract.FoundingActionAccept && w.status.State != models.FoundingReviewing:
		return temporal.NewApplicationError("There is no proposal to accept yet; answer the question.", contract.FoundingErrConflict)
	}
	return nil
}

// answer records the answer in the row and hands it to the loop; it
// returns once the row shows it.
func (w *foundingWorkflow) answer(ctx workflow.Context, a contract.FoundingAnswer) (contract.FoundingStatus, error) {
	w.recording = true
	defer func() { w.recording = false }()
	in := contract.RecordAnswerInput{InterviewRef: w.ref, Seq: w.status.Answers + 1, Answer: a}
	var st contract.FoundingStatus
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, interviewBookkeeping), (*activities.Founding).RecordAnswer, in).Get(ctx, &st); err != nil {
		return w.status, err
	}
	w.status = st
	w.pending = append(w.pending, a)
	return w.status, nil
}

func (w *foundingWorkflow) run(ctx workflow.Context) error {
	var a *activities.Founding
	idle := w.in.IdleTimeout
	if idle <= 0 {
		idle = contract.DefaultFoundingIdleTimeout
	}
	book := workflow.WithActivityOptions(ctx, interviewBookkeeping)
	segment := true // the idea waits for the first question
	for {
		if segment {
			var st contract.FoundingStatus
			if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, interviewerActivity), a.InterviewSegment, w.ref).Get(ctx, &st); err != nil {
				workflow.GetLogger(ctx).Warn("interviewer failed; interview rejected", "error", err)
				return w.reject(book, "The interviewer could not answer; start a new interview shortly.")
			}
			w.status = st
			segment = false
		}
		if !w.status.State.Open() {
			return nil
		}
		answered, err := workflow.AwaitWithTimeout(ctx, idle, func() bool { return len(w.pending) > 0 })
		if err != nil {
			return err
		}
		if !answered {
			if w.recording { // an answer is landing: take it
				if err := workflow.Await(ctx, func() bool { return len(w.pending) > 0 }); err != nil {
					return err
				}
			} else {
				return w.reject(book, "The interview had no answer for a long time; start a new one when ready.")
			}
		}
		next := w.pending[0]
		w.pending = w.pending[1:]
		switch next.Action {
		case contract.FoundingActionWithdraw:
			return nil // recorded as rejected by RecordAnswer
		case contract.FoundingActionAccept:
			var st contract.FoundingStatus
			if err := workflow.ExecuteActivity(book, a.Found, w.ref).Get(book, &st); err != nil {
				return err
			}
			w.status = st
			return nil
		default:
			segment = true
		}
	}
}

func (w *foundingWorkflow) reject(ctx workflow.Context, reason string) error {
	var st contract.FoundingStatus
	err := workflow.ExecuteActivity(ctx, (*activities.Founding).RejectInterview, contract.RejectInput{InterviewRef: w.ref, Reason: reason}).Get(ctx, &st)
	if err == nil {
		w.status = st
	}
	return err
}
