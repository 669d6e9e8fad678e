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
	// The rows came with the credential (cached with it, see
	// service.CredentialCacheTTL); read only what it lacks.
	me := Me{Principal: p, User: p.User, Conglomerate: p.Account}
	if p.UserID != "" && me.User == nil {
		u, err := s.store.Identity().GetUser(ctx, p.UserID)
		if err != nil {
			return Me{}, err
		}
		me.User = &u
	}
	if p.ConglomerateID != "" && me.Conglomerate == nil {
		c, err := s.store.Identity().GetConglomerate(ctx, p.ConglomerateID)
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
// Before that, the owned accounts' platform subscriptions are cancelled,
// and for every company archiving would stop what archiving stops: its
// payment objects are deactivated and its sales on the connected account
// stopped (sales.StopCompanySales: products deactivated, customers'
// subscriptions cancelled). When live-mode objects cannot be, nothing is
// deleted and the caller should retry (upstream_unavailable, 502; what
// was stopped stays stopped). After it, every credential of the account —
// its companies' keys included — stops at once on this replica.
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
	if err := s.stopCompanySales(ctx, owned); err != nil {
		return err
	}
	if err := s.store.Identity().DeleteAccount(ctx, p.UserID, s.now()); err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, c := range owned {
		gone[c.ID] = true
	}
	// Every cached credential of the user (OAuth access tokens included)
	// and of the accounts' companies stops at once on this replica; the
	// others notice within service.CredentialCacheTTL.
	s.core.ForgetUser(p.UserID)
	for id := range gone {
		s.core.ForgetAccount(id)
	}
	return nil
}

// stopCompanySales stops the sales of every live company of the owned
// accounts, once per company, as archiving each would.
func (s *Service) stopCompanySales(ctx context.Context, owned []models.Conglomerate) error {
	if s.sales == nil {
		return nil
	}
	for _, c := range owned {
		v, err := s.core.AuthorizeConglomerate(ctx, c.ID)
		if err != nil {
			return err
		}
		cos, err := s.store.Companies().ListCompanies(ctx, v.Scope, false)
		if err != nil {
			return err
		}
		for _, co := range cos {
			sc, _, err := s.store.CompanyInConglomerate(ctx, v.Scope, co.ID)
			if err != nil {
				return err
			}
			if err := s.sales.StopCompanySales(ctx, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) ownedConglomerates(ctx context.Context, userID string) ([]models.Conglomerate, error) {
	all, err := s.store.Identity().ListConglomeratesForUser(ctx, userID)
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
