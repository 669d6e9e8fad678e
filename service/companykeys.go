package service

import (
	"context"
	"errors"
	"time"

	"holdco/models"
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
		k, err = s.store.CreateCompanyKeyIfNone(ctx, s.newCompanyKey(c.ID))
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
	return s.openCompanyKey(k)
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
			return Principal{}, errBadCredential
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
		return Principal{}, errBadCredential
	case err != nil:
		return Principal{}, err
	}
	p := Principal{Credential: CredentialCompanyKey, CredentialID: k.ID, CompanyID: c.ID, ConglomerateID: c.ConglomerateID}
	s.companyKeys.Set(hash, p)
	return p, nil
}
