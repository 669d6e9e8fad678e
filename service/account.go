package service

import (
	"context"

	"holdco/models"
)

// Me describes the caller for GET /auth/me.
type Me struct {
	Principal    Principal
	User         *models.User         // user credentials
	Conglomerate *models.Conglomerate // user and company credentials
}

// Me answers for every credential kind.
func (s *Service) Me(ctx context.Context) (Me, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Me{}, errUnauthenticated
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
func (s *Service) DeleteAccount(ctx context.Context) error {
	p, err := requireUser(ctx)
	if err != nil {
		return err
	}
	if err := s.store.DeleteAccount(ctx, p.UserID, s.now()); err != nil {
		return err
	}
	s.userKeys.DeleteWhere(func(q Principal) bool { return q.UserID == p.UserID })
	s.sessions.DeleteWhere(func(q Principal) bool { return q.UserID == p.UserID })
	return nil
}
