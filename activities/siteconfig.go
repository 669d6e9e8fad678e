package activities

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/store"
	"holdco/workflows/contract"
)

// CompanyKeys opens a company's live API key (service.CompanyKeyReader);
// models.ErrNotFound when it has none yet.
type CompanyKeys interface {
	LiveCompanyKey(ctx context.Context, c store.CompanyScope) (string, error)
}

// SiteEnvironment sets a deployed site's environment (providers/statichost
// locally; a hosting project's environment variables elsewhere).
type SiteEnvironment interface {
	Configure(ctx context.Context, companyID, handle string, env map[string]string) error
}

// Names of the variables a company's site reads.
const (
	EnvAPIURL = "HOLDCO_API_URL"
	EnvAPIKey = "HOLDCO_API_KEY"
)

// SiteConfig is the activity set of the site configuration workflow.
type SiteConfig struct {
	Store   *store.Store
	Keys    CompanyKeys
	Hosting SiteEnvironment
	// APIURL is the REST API address the site calls.
	APIURL string
}

// WriteSiteConfig writes the company's current API key and the API address
// into its site's environment, replacing what was there (so a rotated key
// no longer appears). An archived or missing company is left alone.
func (s *SiteConfig) WriteSiteConfig(ctx context.Context, in contract.SiteConfigInput) error {
	scope, err := s.Store.SystemCompanyScope(ctx, in.CompanyID)
	var c models.Company
	if err == nil {
		c, err = s.Store.Companies().GetCompany(ctx, scope)
	}
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return nil
	}
	if err != nil {
		return err
	}
	env := map[string]string{EnvAPIURL: s.APIURL}
	key, err := s.Keys.LiveCompanyKey(ctx, scope)
	switch {
	case err == nil:
		env[EnvAPIKey] = key
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	return s.Hosting.Configure(ctx, c.ID, c.Handle, env)
}
