package api

import (
	"context"
	"holdco/service/identity"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// ssoCookie carries the session of holdco's own pages (device approval,
// action pages): an opaque id that no REST endpoint accepts as a bearer, so
// a cookie that reaches another listener of the same host (cookies ignore
// ports) is no API credential. /auth/logout clears it on every response.
const ssoCookie = identity.PageSessionCookie

type redirectOutput struct {
	Status       int
	Location     string        `header:"Location"`
	CacheControl string        `header:"Cache-Control"`
	SetCookie    []http.Cookie `header:"Set-Cookie"`
}

func redirect(location string, cookies ...http.Cookie) *redirectOutput {
	return &redirectOutput{Status: http.StatusFound, Location: location, CacheControl: "no-store", SetCookie: cookies}
}

// UserResponse is a user as the REST API shows it.
type UserResponse struct {
	ID        string    `json:"id" format:"uuid"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// MeResponse describes the caller, for every credential kind.
type MeResponse struct {
	Kind           string        `json:"kind" enum:"user,company,admin" doc:"Who acts: a person, a company (company key) or an operator."`
	Credential     string        `json:"credential" enum:"web_session,session_key,personal_access_token,company_key,admin_token"`
	Scope          string        `json:"scope" enum:"conglomerate,company,admin" doc:"What the credential reaches."`
	User           *UserResponse `json:"user" doc:"The signed-in user; null for company and admin credentials."`
	ConglomerateID *string       `json:"conglomerate_id" format:"uuid"`
	CompanyID      *string       `json:"company_id" format:"uuid"`
}

type authHandlers struct {
	svc    *identity.Service
	secure bool // cookies only over https
}

func (h *authHandlers) cookie(value string, maxAge int) http.Cookie {
	return http.Cookie{Name: ssoCookie, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode}
}

func registerAuthRoutes(api huma.API, h *authHandlers) {
	huma.Register(api, huma.Operation{
		OperationID: "auth-login", Method: http.MethodGet, Path: "/auth/login", Tags: []string{"auth"},
		Summary: "Start browser sign-in",
		Description: "Redirects to the identity provider. `redirect_url` (a path, or a URL on the frontend's or holdco's origin; never a company site) is where the browser lands after sign-in, " +
			"with a one-time `?login_code=` (valid 60 seconds) that the frontend exchanges at `POST /auth/session` for the web session token. " +
			"Sets a short-lived HttpOnly cookie that binds the sign-in to this browser; the callback requires it.",
		DefaultStatus: http.StatusFound,
	}, h.login)
	huma.Register(api, huma.Operation{
		OperationID: "auth-callback", Method: http.MethodGet, Path: "/auth/callback", Tags: []string{"auth"},
		Summary: "Identity provider callback",
		Description: "Signs the user in (creating the account and its conglomerate on first sign-in) and redirects to the frontend with `?login_code=`; no token is ever put in a URL. " +
			"Failures redirect to the frontend login page with `?error=` (`other_browser` when this browser did not start the sign-in: login CSRF protection).",
		DefaultStatus: http.StatusFound,
	}, h.callback)
	huma.Register(api, huma.Operation{
		OperationID: "auth-session", Method: http.MethodPost, Path: "/auth/session", Tags: []string{"auth"},
		Summary: "Exchange a sign-in's login code for a web session token",
		Description: "The code from `?login_code=` is single use and valid for 60 seconds; the first attempt uses it up. " +
			"It is bound to the browser that signed in: the request must carry the `holdco_sso` cookie the sign-in set (a page or frontend on holdco's origin sends it), so a code sent to another browser signs nobody in. " +
			"An unknown, expired or spent code, or one without its browser's cookie, answers 400 `bad_request`.",
	}, h.session)
	huma.Register(api, huma.Operation{
		OperationID: "auth-logout", Method: http.MethodGet, Path: "/auth/logout", Tags: []string{"auth"},
		Summary: "End the web session",
		Description: "Revokes every web session of the token's user, ends the provider session where it supports logout, and redirects to the frontend login page. " +
			"Every response clears the SSO cookie, except for a navigation from another site (a tenant page, say) whose token was not issued to the cookie's user: that one leaves the browser signed in to holdco's pages.",
		DefaultStatus: http.StatusFound,
		Middlewares: huma.Middlewares{func(ctx huma.Context, next func(huma.Context)) {
			// Decided before the handler revokes anything: the cookie's
			// session is still live then.
			if h.svc.LogoutClearsCookie(ctx.Context(), ctx.Query("token"), cookieValue(ctx.Header("Cookie"), ssoCookie), navigationFromOwnPage(ctx.Header("Sec-Fetch-Site"))) {
				c := h.cookie("", -1)
				ctx.AppendHeader("Set-Cookie", c.String())
			}
			next(ctx)
		}},
	}, h.logout)
	huma.Register(api, huma.Operation{
		OperationID: "auth-me", Method: http.MethodGet, Path: "/auth/me", Tags: []string{"auth"},
		Summary: "Who am I", Security: bearerSecurity,
	}, h.me)
	huma.Register(api, huma.Operation{
		OperationID: "auth-delete-me", Method: http.MethodDelete, Path: "/auth/me", Tags: []string{"auth"},
		Summary:     "Delete my account",
		Description: "Archives the user's companies, hard-deletes their conglomerate, revokes every credential and soft-deletes the user, in one transaction. The mailbox can never sign up again.",
		Security:    bearerSecurity, DefaultStatus: http.StatusNoContent,
	}, h.deleteMe)
}

type loginInput struct {
	RedirectURL string `query:"redirect_url" doc:"Where to land after sign-in: a path or a URL on the frontend's or holdco's origin (never a company site)."`
	Ref         string `query:"ref" maxLength:"200" doc:"Referral or campaign tag, carried through sign-in."`
	ScreenHint  string `query:"screen_hint" doc:"sign-up or sign-in; other values are ignored."`
}

func (h *authHandlers) login(ctx context.Context, in *loginInput) (*redirectOutput, error) {
	start, err := h.svc.BeginWebLogin(ctx, in.RedirectURL, in.Ref, in.ScreenHint)
	if err != nil {
		return nil, err
	}
	// The cookie that binds the sign-in to this browser (login CSRF).
	binding := http.Cookie{Name: identity.SignInCookieName(start.State, h.secure), Value: start.Binding, Path: "/",
		MaxAge: int(identity.SignInCookieTTL.Seconds()), HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode}
	return redirect(start.URL, binding), nil
}

type callbackInput struct {
	Code  string `query:"code" required:"true"`
	State string `query:"state"`
	// cookie is the request's Cookie header (read by Resolve, so that the
	// per-sign-in cookie names stay out of the OpenAPI document).
	cookie string
}

func (in *callbackInput) Resolve(ctx huma.Context) []error {
	in.cookie = ctx.Header("Cookie")
	return nil
}

func (h *authHandlers) callback(ctx context.Context, in *callbackInput) (*redirectOutput, error) {
	name := identity.SignInCookieName(in.State, h.secure)
	binding := cookieValue(in.cookie, name)
	// A binding serves one callback.
	spent := http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode}
	res, err := h.svc.CompleteWebLogin(ctx, in.Code, in.State, binding)
	if err != nil {
		return redirect(h.svc.LoginPageURL(identity.RefusalReason(err)), spent), nil
	}
	return redirect(res.RedirectURL, h.cookie(res.Cookie, int(identity.WebSessionTTL.Seconds())), spent), nil
}

// cookieValue is the value of the named cookie in a Cookie header ("" when
// absent).
func cookieValue(header, name string) string {
	if header == "" {
		return ""
	}
	c, err := (&http.Request{Header: http.Header{"Cookie": {header}}}).Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// navigationFromOwnPage reports whether a browser's GET comes from one of
// holdco's own pages or from the user (the address bar, a bookmark:
// Sec-Fetch-Site none), not from another site's page; a client that sends
// no Sec-Fetch-Site is not a browser following another site's link.
func navigationFromOwnPage(secFetchSite string) bool {
	return secFetchSite == "" || secFetchSite == "same-origin" || secFetchSite == "none"
}

// LoginCodeRequest exchanges a sign-in's one-time code.
type LoginCodeRequest struct {
	Code string `json:"code" minLength:"1" maxLength:"200" doc:"The login_code the sign-in appended to the frontend address."`
}

// WebSessionResponse carries a web session token, shown once.
type WebSessionResponse struct {
	SessionToken string    `json:"session_token" doc:"Web session JWT; send it as a bearer token."`
	ExpiresAt    time.Time `json:"expires_at"`
}

type sessionInput struct {
	// SSO is the browser's SSO cookie: a code is spent only by the browser
	// whose sign-in it came from (the cookie set with it).
	SSO  string `cookie:"holdco_sso"`
	Body LoginCodeRequest
}
type sessionOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         WebSessionResponse
}

func (h *authHandlers) session(ctx context.Context, in *sessionInput) (*sessionOutput, error) {
	ws, err := h.svc.ExchangeLoginCode(ctx, in.Body.Code, in.SSO)
	if err != nil {
		return nil, err
	}
	return &sessionOutput{CacheControl: "no-store", Body: WebSessionResponse{SessionToken: ws.Token, ExpiresAt: ws.ExpiresAt}}, nil
}

type logoutInput struct {
	Token string `query:"token" required:"true" doc:"The web session token to end."`
}

func (h *authHandlers) logout(ctx context.Context, in *logoutInput) (*redirectOutput, error) {
	// The clearing cookie is set by the operation's middleware.
	return redirect(h.svc.Logout(ctx, in.Token)), nil
}

type meOutput struct {
	Body MeResponse
}

func (h *authHandlers) me(ctx context.Context, _ *struct{}) (*meOutput, error) {
	me, err := h.svc.Me(ctx)
	if err != nil {
		return nil, err
	}
	p := me.Principal
	out := &meOutput{Body: MeResponse{Credential: string(p.Credential), Scope: p.Scope()}}
	switch {
	case p.IsUser():
		out.Body.Kind = "user"
	case p.IsAdmin():
		out.Body.Kind = "admin"
	default:
		out.Body.Kind = "company"
	}
	if me.User != nil {
		u := toUserResponse(*me.User)
		out.Body.User = &u
	}
	out.Body.ConglomerateID = optional(p.ConglomerateID)
	out.Body.CompanyID = optional(p.CompanyID)
	return out, nil
}

func (h *authHandlers) deleteMe(ctx context.Context, _ *struct{}) (*struct{}, error) {
	return nil, h.svc.DeleteAccount(ctx)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
