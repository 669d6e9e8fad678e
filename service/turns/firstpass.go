package turns

import (
	"context"

	"holdco/models"
	"holdco/service"
)

// StartFirstPass starts a new company's first turn with brief (trigger
// first_pass, a new session), under the rules of every turn: the company
// is provisioned (business_not_active), its plan allows agent work, the
// balance reaches MinCreditsToStartTurn (insufficient_credits with
// needed), and no turn runs (conflict with the running turn's turn_id).
// The caller authorized the company (service/founding).
func (s *Service) StartFirstPass(ctx context.Context, ac service.AuthorizedCompany, brief string) (Started, error) {
	if err := s.canWork(ctx, ac, false); err != nil {
		return Started{}, err
	}
	t, err := s.start(ctx, ac, models.Turn{SessionID: newSession(), Trigger: models.TriggerFirstPass, Message: brief}, brief)
	if err != nil {
		return Started{}, err
	}
	return Started{TurnID: t.ID, SessionID: t.SessionID, CompanyID: ac.ID, Status: t.Status}, nil
}
