// Package connector holds the use cases of the assistant connector (MCP):
// resolving the `business` an assistant names, the business list and
// detail, the link-only tools, the billing-link rate limit, uploads of
// base64 content, the agents' tools with a business, and the task view of
// a turn. Each maps to the domain use cases (companies, billing, turns,
// files, sales, founding, the agents' catalog), which keep their own rules;
// mcp/ adapts these to the protocol.
package connector

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/files"
	"holdco/service/founding"
	"holdco/service/sales"
	"holdco/service/turns"
	"holdco/store"
)

// Founding is what the connector needs from service/founding: creating a
// business from an idea and starting its first turn.
type Founding interface {
	CreateBusiness(ctx context.Context, in founding.CreateBusinessInput) (founding.CreateBusinessResult, error)
	StartFirstPass(ctx context.Context, companyID string) (founding.FirstPass, error)
}

// Deps are the use cases the connector maps to.
type Deps struct {
	Core      *service.Core
	Companies *companies.Service
	Billing   *billing.Service
	Turns     *turns.Service
	Files     *files.Service
	Sales     *sales.Service
	Tools     *agenttools.Catalog
	// Founding nil: create_business and start_first_pass answer
	// upstream_unavailable.
	Founding Founding
}

// Service is the connector's use cases.
type Service struct {
	Deps
	store *store.Store
	now   func() time.Time
}

// New builds the connector's use cases.
func New(d Deps) *Service {
	return &Service{Deps: d, store: d.Core.Store(), now: d.Core.Clock()}
}

// account is the account (conglomerate) the acting user works in: the
// principal's, else the first the user belongs to.
func (s *Service) account(ctx context.Context) (service.ConglomerateView, error) {
	id, err := s.accountID(ctx)
	if err != nil {
		return service.ConglomerateView{}, err
	}
	return s.Core.AuthorizeConglomerate(ctx, id)
}

// accountID is the id of the account account authorizes.
func (s *Service) accountID(ctx context.Context) (string, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return "", err
	}
	if p.ConglomerateID != "" {
		return p.ConglomerateID, nil
	}
	views, err := s.Companies.MyConglomerates(ctx)
	if err != nil {
		return "", err
	}
	if len(views) == 0 {
		return "", models.Errorf(models.CodeNotFound, "This user has no account yet.")
	}
	return views[0].ID, nil
}

// resolve applies the authorization step to the business an assistant
// names by handle or id: an unknown one (or an archived one) is not_found,
// another account's forbidden. The answered ctx carries the authorized
// business, which the use cases called with it take as authorized
// (service.WithAuthorizedCompany) instead of authorizing it again: one
// connector call authorizes its business once.
func (s *Service) resolve(ctx context.Context, business string) (context.Context, service.AuthorizedCompany, error) {
	ac, err := s.authorizeBusiness(ctx, business)
	if err != nil {
		return ctx, ac, err
	}
	return service.WithAuthorizedCompany(ctx, ac), ac, nil
}

func (s *Service) authorizeBusiness(ctx context.Context, business string) (service.AuthorizedCompany, error) {
	id, err := s.businessID(ctx, business)
	if err != nil {
		return service.AuthorizedCompany{}, err
	}
	ac, err := s.Core.AuthorizeCompany(ctx, id, false)
	return ac, businessError(err)
}

// businessID is the id of the business named by its id or handle, not
// authorized yet.
func (s *Service) businessID(ctx context.Context, business string) (string, error) {
	ref := strings.TrimSpace(business)
	if err := service.CheckText(business, true); err != nil {
		return "", err.WithField("business")
	}
	if ref == "" {
		return "", models.Errorf(models.CodeInvalidArgument, "Name the business by its handle or id.").WithField("business")
	}
	if u, err := uuid.Parse(ref); err == nil {
		return u.String(), nil
	}
	handle := strings.ToLower(ref)
	if !models.ValidHandle(handle) {
		return "", models.Errorf(models.CodeInvalidArgument, "%q is neither a business id nor a handle.", ref).WithField("business")
	}
	id, err := s.store.Companies().CompanyIDByHandle(ctx, handle)
	if errors.Is(err, models.ErrNotFound) {
		return "", models.Errorf(models.CodeNotFound, "There is no business with the handle %q.", handle).WithField("business")
	}
	return id, err
}

// businessError is an authorization's refusal of the business, as the
// field business's.
func businessError(err error) error {
	var de *models.Error
	if errors.As(err, &de) && de.Field == "" {
		return de.WithField("business")
	}
	return err
}

// siteURL is where the business's site is served.
func (s *Service) siteURL(c models.Company) string {
	base := s.Core.Config().SitesURL
	if base == "" {
		return ""
	}
	return base + "/" + url.PathEscape(c.Handle) + "/"
}

// dashboardURL is the web app's page of the business.
func (s *Service) dashboardURL(c models.Company) string {
	return s.Billing.DashboardURL(c.ConglomerateID) + "&company_id=" + url.QueryEscape(c.ID)
}

// noFounding is the answer of the founding tools on a server without the
// founding use cases.
func noFounding() error {
	return models.Errorf(models.CodeUpstreamUnavailable, "Founding businesses is not available on this server.")
}

// internalf is an unexpected failure, its cause kept for logs only.
func internalf(err error, op string) error {
	return models.Errorf(models.CodeInternal, "The connector failed on the service side; retry shortly.").Wrap(fmt.Errorf("connector: %s: %w", op, err))
}
