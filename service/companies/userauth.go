package companies

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"holdco/models"
	"holdco/service"
)

// DisableUserAuth revokes the OpenID client of a company's own app sign-in
// (operators only). The reason and the company's conglomerate are kept on
// the client row, which outlives the company; provisioning never clears
// the revocation.
func (s *Service) DisableUserAuth(ctx context.Context, companyID, reason string) (models.CompanyOIDCClient, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return models.CompanyOIDCClient{}, err
	}
	reason = strings.TrimSpace(reason)
	if n := utf8.RuneCountInString(reason); n < 4 || n > 500 {
		return models.CompanyOIDCClient{}, models.Errorf(models.CodeInvalidArgument, "reason must be 4 to 500 characters.").WithField("reason")
	}
	scope, c, err := s.store.AdminCompany(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return models.CompanyOIDCClient{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", companyID)
	}
	if err != nil {
		return models.CompanyOIDCClient{}, err
	}
	// A company not provisioned yet gets a revoked placeholder, so its
	// later provisioning finds the client revoked.
	placeholder := models.CompanyOIDCClient{CompanyID: c.ID, ClientID: "co_revoked_" + strings.ReplaceAll(c.ID, "-", "")}
	return s.store.OAuth().RevokeCompanyOIDCClient(ctx, admin, scope, placeholder, reason, s.now())
}
