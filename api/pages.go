package api

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/identity"
)

// Pages holdco serves itself: the device-login approval page, and a small
// landing and login page so the embedded default (which has no frontend)
// can be signed in to from a browser. They are HTML, so not in the OpenAPI
// document.
var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>holdco — {{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;line-height:1.5}
code,.code{font-family:ui-monospace,monospace;font-size:1.4rem;letter-spacing:.1em}
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}.error{color:#a00}</style></head>
<body><h1>{{.Title}}</h1>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .Token}}<p>Web session token for the REST API (send it as <code>Authorization: Bearer …</code>; valid until {{.TokenExpires}}):</p><pre style="white-space:pre-wrap;word-break:break-all">{{.Token}}</pre>{{end}}
{{if .Ask}}<form method="get" action="{{.DevicePath}}"><label>Code shown by the CLI <input name="user_code" autocomplete="off" autofocus></label> <button>Continue</button></form>{{end}}
{{if .UserCode}}<p>A command-line login asks to act as you. Check that the CLI shows this code:</p><p class="code">{{.UserCode}}</p>
<form method="post" action="{{.DevicePath}}"><input type="hidden" name="user_code" value="{{.UserCode}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button name="decision" value="approve">Approve</button><button name="decision" value="deny">Deny</button></form>{{end}}
{{if .Links}}<ul>{{range .Links}}<li><a href="{{.URL}}">{{.Text}}</a></li>{{end}}</ul>{{end}}
</body></html>`))

type pageLink struct{ URL, Text string }

type pageData struct {
	Title, Error, Message string
	Ask                   bool
	UserCode, CSRF        string
	DevicePath            string
	Token, TokenExpires   string
	Links                 []pageLink
}

func renderPage(c *gin.Context, status int, d pageData) {
	d.DevicePath = identity.DevicePagePath
	pageHeaders(c, status)
	_ = pageTemplate.Execute(c.Writer, d)
}

// pageHeaders starts an answer of one of holdco's own HTML pages: not
// cached, no framing, nothing loaded but inline styles, forms only to
// this origin. The referrer policy same-origin sends nothing to other
// origins, and lets the browser name this origin on the pages' own form
// posts (no-referrer would make it send Origin: null, as a sandboxed
// page does).
func pageHeaders(c *gin.Context, status int) {
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	c.Header("X-Frame-Options", "DENY")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Referrer-Policy", "same-origin")
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Status(status)
}

type pages struct {
	svc    *identity.Service
	logger *slog.Logger
	// companies authorizes the connector's action pages.
	companies *companies.Service
}

// failed renders a refused or failed page action: a domain error with its
// own status and sentence, anything else (a database failure) logged and
// shown as a 500 without its text.
func (p *pages) failed(c *gin.Context, d pageData, err error) {
	var de *models.Error
	if errors.As(err, &de) && StatusOf(de.Code) < 500 {
		d.Error = de.Detail
		renderPage(c, StatusOf(de.Code), d)
		return
	}
	p.logger.ErrorContext(c.Request.Context(), "page failed", "route", c.FullPath(), "error", err)
	d.Error = "Something went wrong on our side; please try again."
	d.Ask, d.UserCode = false, ""
	renderPage(c, http.StatusInternalServerError, d)
}

func registerPages(engine *gin.Engine, p *pages) {
	engine.GET("/", p.home)
	engine.GET("/login", p.home)
	engine.GET(billing.DashboardPath, p.dashboard) // where billing and payment returns land without a frontend, and the connector's link-only actions (actionpages.go)
	engine.GET(identity.DevicePagePath, p.device)
	engine.POST(identity.DevicePagePath, p.decideDevice)
}

func (p *pages) home(c *gin.Context) {
	d := pageData{Title: "holdco", Message: "The service is running.", Links: []pageLink{
		{"/auth/login?redirect_url=%2F", "Sign in"}, {"/docs", "REST API reference"}, {"/health", "Health"},
	}}
	switch c.Query("error") {
	case "":
	case identity.ReasonAccountDeleted:
		d.Error = "An account with this email address was deleted; it cannot sign up again."
	case identity.ReasonOtherBrowser:
		d.Error = "This sign-in was started in another browser or took too long; sign in again here."
	default:
		d.Error = "Sign-in failed; please try again."
	}
	// The landing page of a sign-in without a frontend: it exchanges the
	// one-time code itself, as a frontend would with POST /auth/session.
	if code := c.Query("login_code"); code != "" {
		cookie, _ := c.Cookie(ssoCookie) // the sign-in's browser has it
		ws, err := p.svc.ExchangeLoginCode(c.Request.Context(), code, cookie)
		if err != nil {
			p.failed(c, d, err)
			return
		}
		d.Message, d.Token, d.TokenExpires = "You are signed in.", ws.Token, ws.ExpiresAt.Format(time.RFC3339)
	}
	renderPage(c, http.StatusOK, d)
}

// session authenticates the SSO cookie or sends the browser to sign in and
// come back.
func (p *pages) session(c *gin.Context) (service.Principal, bool) {
	token, _ := c.Cookie(ssoCookie)
	principal, err := p.svc.SessionFromCookie(c.Request.Context(), token)
	if err != nil && !models.IsCode(err, models.CodeUnauthenticated) {
		p.failed(c, pageData{Title: "holdco"}, err)
		return principal, false
	}
	if err != nil {
		c.Redirect(http.StatusFound, p.svc.LoginURL(c.Request.URL.RequestURI()))
		return principal, false
	}
	return principal, true
}

func (p *pages) device(c *gin.Context) {
	principal, ok := p.session(c)
	if !ok {
		return
	}
	code := c.Query("user_code")
	if code == "" {
		renderPage(c, http.StatusOK, pageData{Title: "Approve a CLI login", Ask: true})
		return
	}
	req, err := p.svc.LookupDevice(c.Request.Context(), code)
	switch {
	case err != nil:
		p.failed(c, pageData{Title: "Approve a CLI login", Ask: true}, err)
	case req.Expired:
		renderPage(c, http.StatusGone, pageData{Title: "Approve a CLI login", Error: "This login request has expired; run `holdco login --device` again."})
	case req.Status != models.DevicePending:
		renderPage(c, http.StatusConflict, pageData{Title: "Approve a CLI login", Error: "This login request was already answered."})
	default:
		renderPage(c, http.StatusOK, pageData{Title: "Approve a CLI login", UserCode: req.UserCode, CSRF: p.svc.DeviceCSRFToken(principal, req.UserCode)})
	}
}

// fromOwnPage reports whether a form post comes from a page of holdco's
// own origin. Sec-Fetch-Site decides when the browser sends it (every
// current one does): only "same-origin" passes; a sandboxed tenant page
// (an opaque origin) sends "cross-site", another origin of the same site
// "same-site". A browser without it is judged by Origin, which must be
// holdco's own ("null", a sandboxed or no-referrer page, is refused). A
// request with neither is not a browser's cross-site post.
func (p *pages) fromOwnPage(c *gin.Context) bool {
	return fromOwnPage(c, p.svc)
}

func fromOwnPage(c *gin.Context, ids *identity.Service) bool {
	return ids.FromOwnPage(c.GetHeader("Sec-Fetch-Site"), c.GetHeader("Origin"))
}

func (p *pages) decideDevice(c *gin.Context) {
	if !p.fromOwnPage(c) {
		renderPage(c, http.StatusForbidden, pageData{Title: "Approve a CLI login", Error: "This form was not sent from holdco's page; open the link from the CLI again."})
		return
	}
	principal, ok := p.session(c)
	if !ok {
		return
	}
	code, decision := c.PostForm("user_code"), c.PostForm("decision")
	if !p.svc.CheckDeviceCSRF(principal, code, c.PostForm("csrf")) || (decision != "approve" && decision != "deny") {
		renderPage(c, http.StatusForbidden, pageData{Title: "Approve a CLI login", Error: "This form expired or was not sent from this page; open the link again."})
		return
	}
	if err := p.svc.DecideDevice(c.Request.Context(), principal, code, decision == "approve"); err != nil {
		p.failed(c, pageData{Title: "Approve a CLI login"}, err)
		return
	}
	msg := "Denied. The CLI will not be signed in."
	if decision == "approve" {
		msg = "Approved. You can close this page and return to the terminal."
	}
	renderPage(c, http.StatusOK, pageData{Title: "Approve a CLI login", Message: msg})
}
