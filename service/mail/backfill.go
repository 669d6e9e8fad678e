package mail

import (
	"context"

	"holdco/models"
	"holdco/service"
)

// BackfillInput bounds one backfill run.
type BackfillInput struct {
	Limit int // messages handled in this run: 1 to MaxBackfillBatch; 0 is DefaultBackfillBatch
}

// BackfillResult sorts every message the run looked at into one bucket,
// by id.
type BackfillResult struct {
	// Updated: the provider gave the body and this run stored it.
	Updated []string
	// Empty: the provider had no body; the message stays missing and the
	// next run asks again.
	Empty []string
	// Skipped: another run stored the body between this run's read and its
	// write; not a failure.
	Skipped []string
	// Failed: the provider could not be asked (an error, logged); the
	// message stays missing and the next run asks again.
	Failed []string
}

// BackfillContent asks the provider again for the bodies of received
// messages stored without one (operators only). Runs may overlap: a body is
// stored only while the message is still missing (a conditional update), so
// two runs never both count a message as updated.
func (s *Service) BackfillContent(ctx context.Context, in BackfillInput) (BackfillResult, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return BackfillResult{}, err
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = DefaultBackfillBatch
	case limit < 1 || limit > MaxBackfillBatch:
		return BackfillResult{}, models.Errorf(models.CodeInvalidArgument, "limit must be between 1 and %d.", MaxBackfillBatch).WithField("limit")
	}
	if s.bodies == nil {
		return BackfillResult{}, models.Errorf(models.CodeConflict, "The configured mail provider cannot hand out bodies again.")
	}
	rows, err := s.core.Store().Sales().MissingEmailBodies(ctx, admin, limit)
	if err != nil {
		return BackfillResult{}, err
	}
	r := BackfillResult{Updated: []string{}, Empty: []string{}, Skipped: []string{}, Failed: []string{}}
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		body, err := s.bodies.FetchBody(ctx, row.ProviderMessageID)
		if err != nil {
			s.core.Logger().Warn("email body fetch failed", "email_id", row.ID, "company_id", row.CompanyID, "error", err)
			r.Failed = append(r.Failed, row.ID)
			continue
		}
		if body.Empty() {
			r.Empty = append(r.Empty, row.ID)
			continue
		}
		body = models.EmailBody{Text: cleanBody(body.Text), HTML: cleanBody(body.HTML)}
		filled, err := s.core.Store().Sales().FillEmailBody(ctx, admin, row.ID, body)
		if err != nil {
			return r, err
		}
		if filled {
			r.Updated = append(r.Updated, row.ID)
		} else {
			r.Skipped = append(r.Skipped, row.ID)
		}
	}
	s.core.Logger().Info("email body backfill", "updated", len(r.Updated), "empty", len(r.Empty), "skipped", len(r.Skipped), "failed", len(r.Failed))
	return r, nil
}
