package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service"
	"holdco/service/connector"
)

// The page the connector's link-only tools open when holdco serves its own
// pages (no frontend): <dashboard>?conglomerate_id=…[&company_id=…]&action=….
// It is signed in (the SSO cookie, else the browser signs in and comes
// back) and owner-checked with the rule of the action's own route (a
// business of the user's account; the account's owner for billing), then
// says what the action does and where it is done. It changes nothing.

// actionRoutes names the REST route that performs each link-only action,
// for the page's instructions.
var actionRoutes = map[string]string{
	"archive_business":             "DELETE /companies/{company_id}",
	"rotate_api_key":               "the company's API key rotation in the web app (a person only)",
	"rotate_app_signin_secret":     "the company's app sign-in settings in the web app (a person only)",
	"rotate_user_auth_secret":      "the company's user-authentication settings in the web app (a person only)",
	"request_withdrawal":           "the company's payouts in the web app",
	"cancel_platform_subscription": "the billing portal (GET /conglomerates/{conglomerate_id} shows the plan)",
	"change_auto_topup":            "the account's billing settings",
	"delete_account":               "DELETE /auth/me",
}

// dashboard answers the dashboard path: the action page when an action is
// named, else the landing page.
func (p *pages) dashboard(c *gin.Context) {
	action := c.Query("action")
	if action == "" {
		p.home(c)
		return
	}
	var la *connector.LinkAction
	for i := range connector.LinkActions {
		if connector.LinkActions[i].Name == action {
			la = &connector.LinkActions[i]
		}
	}
	d := pageData{Title: "holdco"}
	if la == nil {
		renderPage(c, http.StatusNotFound, pageData{Title: "holdco", Error: "This link names no action holdco knows."})
		return
	}
	principal, ok := p.session(c)
	if !ok {
		return
	}
	ctx := service.WithPrincipal(c.Request.Context(), principal)
	if la.PerBusiness {
		co, err := p.companies.GetCompany(ctx, c.Query("company_id"))
		if err != nil {
			p.failed(c, d, err)
			return
		}
		d.Title = co.Name + ": " + la.Name
	} else {
		v, err := p.companies.GetConglomerate(ctx, c.Query("conglomerate_id"))
		if err != nil {
			p.failed(c, d, err)
			return
		}
		if action != "delete_account" && v.Role != models.RoleOwner {
			p.failed(c, d, models.Errorf(models.CodeForbidden, "Only the account's owner does this."))
			return
		}
		d.Title = v.Name + ": " + la.Name
	}
	d.Message = la.Note + " Where: " + actionRoutes[action] + "."
	d.Links = []pageLink{{"/docs", "REST API reference"}}
	renderPage(c, http.StatusOK, d)
}
