package identity

import (
	"context"

	"holdco/models"
	"holdco/service"
)

// Me describes the caller for GET /auth/me.
type Me struct {
	Principal    service.Principal
	User         *models.User         // user credentials
	Conglomerate *models.Conglomerate // user and company credentials
}

// Me answers for every credential kind.
func (s *Service) Me(ctx context.Context) (Me, error) {
	p, ok := service.PrincipalFrom(ctx)
	if !ok {
		return Me{}, service.ErrUnauthenticated()
	}
	me := Me{Principal: p}
	if p.UserID != "" {
		u, err := s.store.GetUser(ctx, p.UserID)
		if err != nil {
			return Me{}, err
		}
		me.User = &u
	}
	if p.ConglomerateID != "" {
		c, err := s.store.GetConglomerate(ctx, p.ConglomerateID)
		if err != nil {
			return Me{}, err
		}
		me.Conglomerate = &c
	}
	return me, nil
}

// DeleteAccount archives the caller's companies, hard-deletes the
// conglomerates they own, revokes every credential and soft-deletes the
// user, in one transaction. The mailbox can then never sign up again.
//
// Before that, the owned accounts' platform subscriptions are cancelled
// and their companies' payment objects deactivated (as archiving does);
// when live-mode objects cannot be, nothing is deleted and the caller
// should retry (upstream_unavailable, 502). After it, every credential of
// the account — its companies' keys included — stops at once on this
// replica.
func (s *Service) DeleteAccount(ctx context.Context) error {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return err
	}
	owned, err := s.ownedConglomerates(ctx, p.UserID)
	if err != nil {
		return err
	}
	if s.payments != nil {
		if err := s.payments.StopAccountPayments(ctx, owned); err != nil {
			return err
		}
	}
	if err := s.store.DeleteAccount(ctx, p.UserID, s.now()); err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, c := range owned {
		gone[c.ID] = true
	}
	s.userKeys.DeleteWhere(func(q service.Principal) bool { return q.UserID == p.UserID })
	s.sessions.DeleteWhere(func(q service.Principal) bool { return q.UserID == p.UserID })
	s.companyKeys.DeleteWhere(func(q service.Principal) bool { return gone[q.ConglomerateID] })
	return nil
}

func (s *Service) ownedConglomerates(ctx context.Context, userID string) ([]models.Conglomerate, error) {
	all, err := s.store.ListConglomeratesForUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	owned := all[:0]
	for _, c := range all {
		if c.OwnerUserID == userID {
			owned = append(owned, c)
		}
	}
	return owned, nil
}
