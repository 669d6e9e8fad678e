package api

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
)

// registerRoutes is the route table: every REST operation and page is
// registered here, one resource per file. It returns the capture handler,
// which the router also serves ahead of gin (direct.go), nil without
// services.
func registerRoutes(api huma.API, engine *gin.Engine, d Deps) http.HandlerFunc {
	h := newHealthHandler(d.Health, d.Logger)
	huma.Register(api, huma.Operation{
		OperationID: "get-health",
		Method:      "GET",
		Path:        "/health",
		Summary:     "Service health",
		Description: "Status of the service and of each dependency (database, Temporal) as string values: `ok` or `unavailable` " +
			"(the reason is in the server log, not in this anonymous answer). " +
			"Answers 503 with the same shape when a dependency is down. Dependency checks are cached for one second.",
		Tags: []string{"health"},
	}, h.get)
	if d.Service == nil {
		return nil
	}
	registerAuthRoutes(api, &authHandlers{svc: d.Service.Identity, secure: d.SecureCookies})
	registerCLIRoutes(api, &cliHandlers{svc: d.Service.Identity, trusted: d.TrustedProxies})
	registerTokenRoutes(api, &tokenHandlers{svc: d.Service.Identity})
	registerConnectionRoutes(api, &connectionHandlers{svc: d.Service.OAuth})
	registerConglomerateRoutes(api, &conglomerateHandlers{svc: d.Service.Companies})
	registerCompanyRoutes(api, &companyHandlers{svc: d.Service.Companies})
	registerActivityRoutes(api, &activityHandlers{svc: d.Service.Companies})
	registerDocumentRoutes(api, &documentHandlers{svc: d.Service.Documents})
	registerDashboardRoutes(api, &dashboardHandlers{svc: d.Service.Companies, files: d.Service.Files, mail: d.Service.Mail})
	registerEmailRoutes(api, &emailHandlers{svc: d.Service.Mail})
	registerTaskRoutes(api, &taskHandlers{svc: d.Service.Tasks})
	registerTurnRoutes(api, &turnHandlers{svc: d.Service.Turns})
	registerProspectRoutes(api, &prospectHandlers{svc: d.Service.Prospects})
	registerProvisioningRoutes(api, &provisioningHandlers{svc: d.Service.Companies})
	registerUserAuthRoutes(api, &userAuthHandlers{svc: d.Service.Companies})
	registerCreditRoutes(api, &creditHandlers{svc: d.Service.Billing})
	registerBillingRoutes(api, &billingHandlers{svc: d.Service.Billing, events: d.Service.PaymentEvents})
	registerFileRoutes(api, engine, &fileHandlers{svc: d.Service.Files, auth: d.Service.Identity, logger: d.Logger})
	registerSalesRoutes(api, &salesHandlers{svc: d.Service.Sales})
	registerTraceRoutes(api, &traceHandlers{svc: d.Service.Traces})
	registerDomainRoutes(api, &domainHandlers{svc: d.Service.Growth})
	registerAdRoutes(api, &adHandlers{svc: d.Service.Growth})
	registerDomainPages(engine, &domainPages{svc: d.Service.Growth, ids: d.Service.Identity, logger: d.Logger})
	analytics := &analyticsHandlers{svc: d.Service.Analytics, trusted: d.TrustedProxies, logger: d.Logger}
	registerAnalyticsRoutes(api, engine, analytics)
	registerFoundingRoutes(api, &foundingHandlers{svc: d.Service.Founding})
	registerPages(engine, &pages{svc: d.Service.Identity, logger: d.Logger, companies: d.Service.Companies})
	return analytics.serveCapture
}
