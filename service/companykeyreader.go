package service

import (
	"context"
	"fmt"

	"holdco/store"
)

// CompanyKeyCacheTTL bounds how long a rotated company key keeps working
// on a replica that had it cached.
const CompanyKeyCacheTTL = CredentialCacheTTL

// CompanyKeyReader opens companies' live API keys outside the API process
// (the worker writes them into site environments).
type CompanyKeyReader struct {
	store *store.Store
	seal  Sealer
}

// NewCompanyKeyReader opens keys sealed under the instance key: secretKey
// when configured, else the one kept in the database.
func NewCompanyKeyReader(ctx context.Context, st *store.Store, secretKey []byte) (*CompanyKeyReader, error) {
	key, err := signingKey(ctx, st, secretKey)
	if err != nil {
		return nil, err
	}
	seal, err := newSealer(Signer{key: key})
	if err != nil {
		return nil, fmt.Errorf("service: sealer: %w", err)
	}
	return &CompanyKeyReader{store: st, seal: seal}, nil
}

// LiveCompanyKey returns the company's current key, or models.ErrNotFound
// when none was minted yet.
func (r *CompanyKeyReader) LiveCompanyKey(ctx context.Context, c store.CompanyScope) (string, error) {
	k, err := r.store.Identity().LiveCompanyKey(ctx, c)
	if err != nil {
		return "", err
	}
	raw, err := r.seal.Open(k.Sealed, k.CompanyID)
	if err != nil {
		return "", fmt.Errorf("open company key: %w", err)
	}
	return raw, nil
}
