package companies

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/service"
	"holdco/workflows/contract"
)

// CompanyKey is a company's API key as its owners see it.
type CompanyKey struct {
	CompanyID string
	Key       string
	CreatedAt time.Time
}

// CompanyAPIKey returns the company's permanent key, minting it on the
// first read.
func (s *Service) CompanyAPIKey(ctx context.Context, companyID string) (CompanyKey, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return CompanyKey{}, err
	}
	k, err := s.store.Identity().LiveCompanyKey(ctx, c.Scope)
	if errors.Is(err, models.ErrNotFound) {
		if k, err = s.store.Identity().CreateCompanyKeyIfNone(ctx, c.Scope, s.newCompanyKey(c.ID)); err == nil {
			s.configureSite(ctx, c.Company)
		}
	}
	if err != nil {
		return CompanyKey{}, err
	}
	return s.openCompanyKey(k)
}

// RotateCompanyAPIKey replaces the key. Only a person may rotate: a company
// key cannot rotate itself. The old key stops within CompanyKeyCacheTTL.
func (s *Service) RotateCompanyAPIKey(ctx context.Context, companyID string) (CompanyKey, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return CompanyKey{}, err
	}
	if p, _ := service.PrincipalFrom(ctx); !p.IsUser() {
		return CompanyKey{}, models.Errorf(models.CodeForbidden, "Only a person can rotate a company's API key.")
	}
	k, err := s.store.Identity().RotateCompanyKey(ctx, c.Scope, s.newCompanyKey(c.ID), s.now())
	if err != nil {
		return CompanyKey{}, err
	}
	s.companyKeys.DeleteWhere(func(p *service.Principal) bool { return p != nil && p.CompanyID == c.ID })
	s.configureSite(ctx, c.Company)
	return s.openCompanyKey(k)
}

// configureSite asks the worker to write the company's current key into
// its deployed site's environment (workflow SiteConfig; the key itself
// never travels through Temporal). The key is already stored, so a failed
// start is logged rather than failing the request; the next mint or
// rotation writes it again.
func (s *Service) configureSite(ctx context.Context, c models.Company) {
	if s.temporal == nil {
		return
	}
	// The key is committed: a client that hangs up must not cancel this.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bounds.Of(startTimeout))
	defer cancel()
	_, err := s.temporal.SignalWithStartWorkflow(ctx, contract.SiteConfigWorkflowID(c.ID), contract.SignalSiteConfigChanged, nil,
		client.StartWorkflowOptions{
			TaskQueue:             contract.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				contract.CompanyIDKey.ValueSet(c.ID),
				contract.ConglomerateIDKey.ValueSet(c.ConglomerateID),
			),
		},
		contract.SiteConfigWorkflowName, contract.SiteConfigInput{CompanyID: c.ID})
	if err != nil {
		s.logger.ErrorContext(ctx, "site config: could not start; the site keeps its previous key until the next rotation",
			"company_id", c.ID, "error", err)
	}
}

func (s *Service) newCompanyKey(companyID string) models.CompanyAPIKey {
	raw, hash := service.NewCredential(service.PrefixCompanyKey)
	return models.CompanyAPIKey{CompanyID: companyID, TokenHash: hash, Sealed: s.seal.Seal(raw, companyID)}
}

func (s *Service) openCompanyKey(k models.CompanyAPIKey) (CompanyKey, error) {
	raw, err := s.seal.Open(k.Sealed, k.CompanyID)
	if err != nil {
		return CompanyKey{}, models.Errorf(models.CodeInternal, "The company key cannot be read; rotate it.").Wrap(err)
	}
	return CompanyKey{CompanyID: k.CompanyID, Key: raw, CreatedAt: k.CreatedAt}, nil
}
