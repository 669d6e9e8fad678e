package founding

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/store"
	"holdco/workflows/contract"
)

// The interview's steps for the worker: each takes the conglomerate's
// scope (the worker's) and is idempotent, so an activity retried after a
// crash changes nothing twice.

// RecordAnswer stores the founder's seq-th answer in the transcript: an
// answer claims the interviewer's segment (segment_running), accept moves
// to founding, withdraw rejects the interview. An accept with the
// founder's handle (a new company's) puts it in the proposal Found
// founds. Already stored (a retry): nothing changes.
func (s *Service) RecordAnswer(ctx context.Context, cong store.ConglomerateScope, interviewID string, seq int, a contract.FoundingAnswer) (contract.FoundingStatus, error) {
	f, err := s.store.Founding().UpdateFoundingInterview(ctx, cong, interviewID, func(f *models.FoundingInterview) error {
		if founderAnswers(*f) >= seq || !f.State.Open() {
			return store.ErrUnchanged
		}
		at := s.now()
		entry := models.FoundingEntry{Role: models.RoleFounder, Kind: models.EntryAnswer, Text: a.Text, At: at}
		switch a.Action {
		case contract.FoundingActionAccept:
			entry.Kind, entry.Text = models.EntryAccept, "Found it."
			if a.Handle != "" && f.Proposal != nil && f.Kind != models.FoundingV3Upgrade && a.Handle != f.Proposal.Handle {
				p := *f.Proposal
				p.Handle = a.Handle
				f.Proposal = &p
				entry.Text = "Found it with the handle " + a.Handle + "."
			}
			f.State, f.SegmentRunning, f.SegmentHeartbeatAt = models.FoundingFounding, true, &at
		case contract.FoundingActionWithdraw:
			entry.Kind, entry.Text = models.EntryWithdraw, "Withdrawn."
			f.State, f.RejectedReason, f.EndedAt = models.FoundingRejected, "Withdrawn by the founder.", &at
			f.SegmentRunning, f.SegmentHeartbeatAt = false, nil
		default:
			f.SegmentRunning, f.SegmentHeartbeatAt = true, &at
		}
		f.Transcript = append(f.Transcript, entry)
		return nil
	})
	return statusOf(f), err
}

// HeartbeatSegment renews the interviewer's claim while it works.
func (s *Service) HeartbeatSegment(ctx context.Context, cong store.ConglomerateScope, interviewID string) error {
	return s.store.Founding().HeartbeatFoundingSegment(ctx, cong, interviewID, s.now())
}

// Reject ends an open interview rejected with reason (an idle interview).
func (s *Service) Reject(ctx context.Context, cong store.ConglomerateScope, interviewID, reason string) (contract.FoundingStatus, error) {
	f, err := s.store.Founding().UpdateFoundingInterview(ctx, cong, interviewID, func(f *models.FoundingInterview) error {
		if !f.State.Open() {
			return store.ErrUnchanged
		}
		at := s.now()
		f.State, f.RejectedReason, f.EndedAt = models.FoundingRejected, reason, &at
		f.SegmentRunning, f.SegmentHeartbeatAt = false, nil
		f.Transcript = append(f.Transcript, models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryRejection, Text: reason, At: at})
		return nil
	})
	return statusOf(f), err
}

// Found founds what an accepted interview proposed, through
// companies.StartBusiness (the one business start: the plan, the business
// limit, the platform's cap and the credits, counting the welcome
// credits; the company with its provisioning intent and the welcome
// credits unless the account had them). The founding plan document and
// the interview's end are written on the company's transaction, so a
// retry after a crash finds the interview founded and creates nothing
// again. Provisioning starts after the commit (the sweeper covers a
// crash), and the first pass starts when provisioning is ready
// (StartPendingFirstPass). The interview's handle (the proposal's, or the
// one the founder chose on accept, which RecordAnswer put in the
// proposal) is not held for it: when it is taken by then the next free
// one is used (name-2, …) and named in the transcript's last entry, as
// the founder who chose it was told it was free and is not there to
// choose again; a handle taken at the accept itself was refused then
// (Answer). A refusal of the start (the plan, the business limit, the
// credits) ends the interview rejected with its sentence.
//
// A v3 upgrade renames the company, sets its mission, replaces its
// founding plan and moves it to the current generation; its first pass
// then starts on the new plan at once when the company is ready (else
// when provisioning is). A Temporal that does not take that turn is an
// error, so the activity's retry tries the first pass again.
func (s *Service) Found(ctx context.Context, cong store.ConglomerateScope, interviewID string) (contract.FoundingStatus, error) {
	f, err := s.store.Founding().FoundingInterview(ctx, cong, interviewID)
	if err != nil {
		return statusOf(f), err
	}
	if f.State == models.FoundingFounded && f.Kind == models.FoundingV3Upgrade && f.FirstPassStatus == "" {
		// A retry after the upgrade committed: its first pass is left.
		return s.upgradeFirstPass(ctx, cong, f)
	}
	if f.State != models.FoundingFounding {
		return statusOf(f), nil
	}
	if f.Proposal == nil {
		return s.Reject(ctx, cong, interviewID, "There was no proposal to found.")
	}
	if f.Kind == models.FoundingV3Upgrade {
		return s.upgrade(ctx, cong, f)
	}
	v := service.ConglomerateView{Scope: cong}
	if v.Conglomerate, err = s.store.Identity().GetConglomerate(ctx, cong.ID()); err != nil {
		return contract.FoundingStatus{}, err
	}
	p := *f.Proposal
	_, err = s.companies.StartBusiness(ctx, v, companies.StartBusinessInput{Name: p.Name, Handle: p.Handle, Idea: f.Idea, Mission: p.Mission,
		With: func(tx *store.Store, scope store.CompanyScope, c models.Company) error {
			if _, _, err := tx.Companies().PutDocument(ctx, scope, planDocument(p.FoundingPlan), models.ActivityInput{Kind: models.ActivityDocumentUpdated,
				Actor: models.ActorSystem, Summary: "Founding plan written by the founding interview", Subject: models.DocFoundingPlan}); err != nil {
				return err
			}
			_, err := tx.Founding().UpdateFoundingInterview(ctx, cong, interviewID, func(f *models.FoundingInterview) error {
				if f.State != models.FoundingFounding {
					return errFoundAlready
				}
				at := s.now()
				f.State, f.CompanyID, f.EndedAt = models.FoundingFounded, &c.ID, &at
				f.SegmentRunning, f.SegmentHeartbeatAt = false, nil
				f.Transcript = append(f.Transcript, models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryProposal,
					Text: "Founded " + c.Name + " (" + c.Handle + ").", At: at})
				return nil
			})
			return err
		}})
	var de *models.Error
	switch {
	case errors.Is(err, errFoundAlready):
	case errors.As(err, &de) && de.Code == models.CodeHandleTaken:
		// Taken twice in a row by others: the activity's retry tries
		// the next free handle.
		return contract.FoundingStatus{}, fmt.Errorf("founding: %s", de.Detail)
	case err != nil:
		return s.rejectRefused(ctx, cong, interviewID, err)
	}
	f, err = s.store.Founding().FoundingInterview(ctx, cong, interviewID)
	return statusOf(f), err
}

var errFoundAlready = errors.New("founding: the interview is no longer being founded")

// rejectRefused ends the interview with a service refusal's sentence.
func (s *Service) rejectRefused(ctx context.Context, cong store.ConglomerateScope, interviewID string, refusal error) (contract.FoundingStatus, error) {
	var de *models.Error
	if !errors.As(refusal, &de) {
		return contract.FoundingStatus{}, refusal
	}
	return s.Reject(ctx, cong, interviewID, de.Detail)
}

func planDocument(plan string) models.Document {
	return models.Document{DocumentType: models.DocFoundingPlan, Title: "Founding plan", Content: plan,
		Visibility: models.DocumentVisible, UpdatedBy: models.ActorSystem}
}

// upgrade applies an accepted v3 upgrade interview to its company.
func (s *Service) upgrade(ctx context.Context, cong store.ConglomerateScope, f models.FoundingInterview) (contract.FoundingStatus, error) {
	if f.CompanyID == nil {
		return s.Reject(ctx, cong, f.ID, "The interview names no company to upgrade.")
	}
	scope, c, err := s.store.CompanyInConglomerate(ctx, cong, *f.CompanyID)
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return s.Reject(ctx, cong, f.ID, "The company no longer exists or was archived.")
	}
	if err != nil {
		return contract.FoundingStatus{}, err
	}
	p := *f.Proposal
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		c.Name, c.Mission = p.Name, p.Mission
		if err := tx.Companies().UpdateCompanyFields(ctx, scope, c); err != nil {
			return err
		}
		if err := tx.Founding().SetCompanyGeneration(ctx, scope, models.CurrentCompanyGeneration); err != nil {
			return err
		}
		if _, _, err := tx.Companies().PutDocument(ctx, scope, planDocument(p.FoundingPlan), models.ActivityInput{Kind: models.ActivityDocumentUpdated,
			Actor: models.ActorSystem, Summary: "Founding plan rewritten by the v3 upgrade interview", Subject: models.DocFoundingPlan}); err != nil {
			return err
		}
		_, err := tx.Founding().UpdateFoundingInterview(ctx, cong, f.ID, func(f *models.FoundingInterview) error {
			if f.State != models.FoundingFounding {
				return errFoundAlready
			}
			at := s.now()
			f.State, f.EndedAt = models.FoundingFounded, &at
			f.SegmentRunning, f.SegmentHeartbeatAt = false, nil
			f.Transcript = append(f.Transcript, models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryProposal,
				Text: c.Name + " moved to generation " + strconv.Itoa(models.CurrentCompanyGeneration) + ".", At: at})
			return nil
		})
		return err
	})
	if err != nil && !errors.Is(err, errFoundAlready) {
		return contract.FoundingStatus{}, err
	}
	if f, err = s.store.Founding().FoundingInterview(ctx, cong, f.ID); err != nil {
		return contract.FoundingStatus{}, err
	}
	return s.upgradeFirstPass(ctx, cong, f)
}

// upgradeFirstPass starts the first pass of an upgraded company on its new
// founding plan when the company is ready (StartPendingFirstPass; a
// company not ready keeps it pending until provisioning is), and answers
// the interview's status.
func (s *Service) upgradeFirstPass(ctx context.Context, cong store.ConglomerateScope, f models.FoundingInterview) (contract.FoundingStatus, error) {
	if f.State != models.FoundingFounded || f.FirstPassStatus != "" || f.CompanyID == nil {
		return statusOf(f), nil
	}
	scope, _, err := s.store.CompanyInConglomerate(ctx, cong, *f.CompanyID)
	if errors.Is(err, models.ErrNotFound) {
		return statusOf(f), nil // gone with its account: nothing to start
	}
	if err != nil {
		return statusOf(f), err
	}
	if err := s.StartPendingFirstPass(ctx, cong, scope); err != nil {
		return statusOf(f), err
	}
	f, err = s.store.Founding().FoundingInterview(ctx, cong, f.ID)
	return statusOf(f), err
}

// StartPendingFirstPass starts the first pass of a company founded (or
// upgraded) by an interview, once: the provisioning workflow calls it when
// the company is ready, and the founding step of an upgrade right after
// it (for the worker, which passes the company's scope and its
// conglomerate's). The outcome is kept on the interview (first_pass); a
// company without a pending first pass, or not ready yet, is left alone.
// A first-pass turn made since the interview was founded (a retry after a
// crash) is recorded rather than made again; an earlier founding's turn
// does not count.
func (s *Service) StartPendingFirstPass(ctx context.Context, cong store.ConglomerateScope, scope store.CompanyScope) error {
	if scope.ConglomerateID() != cong.ID() {
		return errors.New("founding: first pass: the company is not the conglomerate's")
	}
	f, err := s.store.Founding().PendingFirstPass(ctx, scope)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c, err := s.store.Companies().GetCompany(ctx, scope)
	if err != nil {
		return err
	}
	var fp FirstPass
	if t, had, err := s.store.Founding().FirstPassTurnSince(ctx, scope, f.UpdatedAt); err != nil {
		return err
	} else if had {
		fp = FirstPass{Status: FirstPassStarted, TurnID: t.ID}
	} else if c.Status == models.CompanyArchived {
		fp = FirstPass{Status: FirstPassNotStarted, Error: models.CodeNotFound, Detail: "The company was archived."}
	} else if fp, err = s.startFirstPass(ctx, service.AuthorizedCompany{Company: c, Scope: scope}, firstPassBrief(c, f.Kind)); err != nil {
		return err
	}
	if fp.Status == FirstPassProvisioning {
		return nil // not ready after all: the next ready run tries again
	}
	if fp.Error == models.CodeConflict {
		// Another caller (the provisioning run and the upgrade's founding
		// step) may have started this first pass a moment ago.
		if t, had, err := s.store.Founding().FirstPassTurnSince(ctx, scope, f.UpdatedAt); err != nil {
			return err
		} else if had {
			fp = FirstPass{Status: FirstPassStarted, TurnID: t.ID}
		}
	}
	if fp.Error == models.CodeUpstreamUnavailable {
		// The turn could not be taken (no Temporal client, the store): the
		// activity's retry tries again.
		return fmt.Errorf("founding: first pass of %s not started: %s", c.ID, fp.Detail)
	}
	_, err = s.store.Founding().UpdateFoundingInterview(ctx, cong, f.ID, func(f *models.FoundingInterview) error {
		if f.FirstPassStatus != "" {
			return store.ErrUnchanged // recorded meanwhile
		}
		f.FirstPassStatus, f.FirstPassError, f.FirstPassDetail = string(fp.Status), string(fp.Error), cut(fp.Detail, 1000)
		if fp.TurnID != "" {
			f.FirstPassTurnID = &fp.TurnID
		}
		return nil
	})
	return err
}
