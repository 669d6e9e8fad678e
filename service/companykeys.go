package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/store"
	"holdco/workflows"
)

// CompanyKeyCacheTTL bounds how long a rotated company key keeps working
// on a replica that had it cached.
const CompanyKeyCacheTTL = 60 * time.Second

// CompanyKey is a company's API key as its owners see it.
type CompanyKey struct {
	CompanyID string
	Key       string
	CreatedAt time.Time
}

// CompanyAPIKey returns the company's permanent key, minting it on the
// first read.
func (s *Service) CompanyAPIKey(ctx context.Context, companyID string) (CompanyKey, error) {
	c, err := s.authorizeCompany(ctx, companyID, false)
	if err != nil {
		return CompanyKey{}, err
	}
	k, err := s.store.LiveCompanyKey(ctx, c.ID)
	if errors.Is(err, models.ErrNotFound) {
		if k, err = s.store.CreateCompanyKeyIfNone(ctx, s.newCompanyKey(c.ID)); err == nil {
			s.configureSite(ctx, c)
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
	c, err := s.authorizeCompany(ctx, companyID, false)
	if err != nil {
		return CompanyKey{}, err
	}
	if p, _ := PrincipalFrom(ctx); !p.IsUser() {
		return CompanyKey{}, models.Errorf(models.CodeForbidden, "Only a person can rotate a company's API key.")
	}
	k, err := s.store.RotateCompanyKey(ctx, s.newCompanyKey(c.ID), s.now())
	if err != nil {
		return CompanyKey{}, err
	}
	s.companyKeys.DeleteWhere(func(p Principal) bool { return p.CompanyID == c.ID })
	s.configureSite(ctx, c)
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
	_, err := s.temporal.SignalWithStartWorkflow(ctx, workflows.SiteConfigWorkflowID(c.ID), workflows.SignalSiteConfigChanged, nil,
		client.StartWorkflowOptions{
			TaskQueue:             workflows.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				workflows.CompanyIDKey.ValueSet(c.ID),
				workflows.ConglomerateIDKey.ValueSet(c.ConglomerateID),
			),
		},
		workflows.SiteConfigWorkflowName, workflows.SiteConfigInput{CompanyID: c.ID})
	if err != nil {
		s.logger.ErrorContext(ctx, "site config: could not start; the site keeps its previous key until the next rotation",
			"company_id", c.ID, "error", err)
	}
}

// CompanyKeyReader opens companies' live API keys outside the API process
// (the worker writes them into site environments).
type CompanyKeyReader struct {
	store *store.Store
	seal  sealer
}

// NewCompanyKeyReader opens keys sealed under the instance key: secretKey
// when configured, else the one kept in the database.
func NewCompanyKeyReader(ctx context.Context, st *store.Store, secretKey []byte) (*CompanyKeyReader, error) {
	key, err := signingKey(ctx, st, secretKey)
	if err != nil {
		return nil, err
	}
	seal, err := newSealer(signer{key: key})
	if err != nil {
		return nil, fmt.Errorf("service: sealer: %w", err)
	}
	return &CompanyKeyReader{store: st, seal: seal}, nil
}

// LiveCompanyKey returns the company's current key, or models.ErrNotFound
// when none was minted yet.
func (r *CompanyKeyReader) LiveCompanyKey(ctx context.Context, companyID string) (string, error) {
	k, err := r.store.LiveCompanyKey(ctx, companyID)
	if err != nil {
		return "", err
	}
	raw, err := r.seal.Open(k.Sealed, k.CompanyID)
	if err != nil {
		return "", fmt.Errorf("open company key: %w", err)
	}
	return raw, nil
}

func (s *Service) newCompanyKey(companyID string) models.CompanyAPIKey {
	raw, hash := NewCredential(PrefixCompanyKey)
	return models.CompanyAPIKey{CompanyID: companyID, TokenHash: hash, Sealed: s.seal.Seal(raw, companyID)}
}

func (s *Service) openCompanyKey(k models.CompanyAPIKey) (CompanyKey, error) {
	raw, err := s.seal.Open(k.Sealed, k.CompanyID)
	if err != nil {
		return CompanyKey{}, models.Errorf(models.CodeInternal, "The company key cannot be read; rotate it.").Wrap(err)
	}
	return CompanyKey{CompanyID: k.CompanyID, Key: raw, CreatedAt: k.CreatedAt}, nil
}

// authenticateCompanyKey resolves a svc_c_v1_ key to its company. Results
// (hits and misses) are cached for CompanyKeyCacheTTL.
func (s *Service) authenticateCompanyKey(ctx context.Context, raw string) (Principal, error) {
	hash := HashSecret(raw)
	if p, ok := s.companyKeys.Get(hash); ok {
		if p.CredentialID == "" {
			return Principal{}, errBadCredential()
		}
		return p, nil
	}
	k, err := s.store.CompanyKeyByHash(ctx, hash)
	var c models.Company
	if err == nil && k.RevokedAt == nil {
		c, err = s.store.GetCompany(ctx, k.CompanyID)
	}
	switch {
	case errors.Is(err, models.ErrNotFound), err == nil && (k.RevokedAt != nil || c.Status == models.CompanyArchived):
		s.companyKeys.Set(hash, Principal{})
		return Principal{}, errBadCredential()
	case err != nil:
		return Principal{}, err
	}
	p := Principal{Credential: CredentialCompanyKey, CredentialID: k.ID, CompanyID: c.ID, ConglomerateID: c.ConglomerateID}
	s.companyKeys.Set(hash, p)
	return p, nil
}
