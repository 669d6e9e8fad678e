package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/service/founding"
	"holdco/store"
	"holdco/workflows/contract"
)

// Founding is the activity set of the founding interview workflow. Each
// activity is idempotent (the service's steps check the row first), so a
// retry after a crash changes nothing twice.
type Founding struct {
	Store    *store.Store
	Founding *founding.Service
	// Model is the configured language model the interviewer calls.
	Model Model
	// HeartbeatEvery is how often a segment renews its claim (0: 2 s).
	HeartbeatEvery time.Duration
}

func (f *Founding) scope(ref contract.InterviewRef) store.ConglomerateScope {
	return f.Store.SystemConglomerateScope(ref.ConglomerateID)
}

// RecordAnswer stores the founder's answer in the interview's row.
func (f *Founding) RecordAnswer(ctx context.Context, in contract.RecordAnswerInput) (contract.FoundingStatus, error) {
	return f.Founding.RecordAnswer(ctx, f.scope(in.InterviewRef), in.InterviewID, in.Seq, in.Answer)
}

// InterviewSegment runs the interviewer on the founder's last answer
// while heartbeating (to Temporal and to the row's claim). A model failure
// that waiting cannot fix (auth, invalid request) is not retried.
func (f *Founding) InterviewSegment(ctx context.Context, ref contract.InterviewRef) (contract.FoundingStatus, error) {
	scope := f.scope(ref)
	every := f.HeartbeatEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	stop := heartbeatWith(ctx, every, func() { _ = f.Founding.HeartbeatSegment(ctx, scope, ref.InterviewID) })
	st, err := f.Founding.RunSegment(ctx, scope, ref.InterviewID, f.Model)
	stop()
	var mce *models.ModelCallError
	if errors.As(err, &mce) && !mce.Retryable {
		return st, temporal.NewNonRetryableApplicationError("interviewer: "+mce.Error(), contract.ErrInterviewerFailed, nil)
	}
	if err != nil && ctx.Err() != nil {
		return st, interrupted(ctx, "interview segment", err)
	}
	return st, err
}

// Found founds what the accepted interview proposed.
func (f *Founding) Found(ctx context.Context, ref contract.InterviewRef) (contract.FoundingStatus, error) {
	return f.Founding.Found(ctx, f.scope(ref), ref.InterviewID)
}

// RejectInterview ends the interview rejected with the reason.
func (f *Founding) RejectInterview(ctx context.Context, in contract.RejectInput) (contract.FoundingStatus, error) {
	return f.Founding.Reject(ctx, f.scope(in.InterviewRef), in.InterviewID, in.Reason)
}
