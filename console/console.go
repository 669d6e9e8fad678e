// Package console is holdco's web console: server-rendered pages for
// founders (sign-in, companies, the founding interview, a company's
// dashboard, the chat with its agent, files, documents, credits,
// settings), served on the API's origin when no frontend is configured.
//
// It is an adapter like the REST API: each page authenticates the
// browser's page session (the SSO cookie that /auth/callback sets), calls
// the use case REST calls with the same typed input, and renders its
// answer; it holds no rule of its own. Forms and fetches are checked with
// Sec-Fetch-Site (or Origin) and a token derived from the page session.
// Scripts and styles are files of this package (embedded), so the pages
// run under a strict Content-Security-Policy with no inline script.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"holdco/api"
	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/identity"
	"holdco/service/usecases"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Path is the console's root.
const Path = identity.ConsolePath

// csp lets a page load only this origin's own files: no inline script or
// style, no frames in it or of it, forms only to this origin. A page with
// a sandboxed preview (the ads page) may frame this origin (cspFrames).
const (
	cspBase = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'; "
	csp       = cspBase + "frame-src 'none'"
	cspFrames = cspBase + "frame-src 'self'"
)

// Deps is what the console needs from the process.
type Deps struct {
	Service *usecases.Services
	Logger  *slog.Logger
}

// Console serves the pages under Path.
type Console struct {
	svc    *usecases.Services
	logger *slog.Logger
	pages  map[string]*template.Template
	mux    *http.ServeMux
	static http.Handler
}

// New builds the console.
func New(d Deps) *Console {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	c := &Console{svc: d.Service, logger: d.Logger, pages: parsePages(), mux: http.NewServeMux()}
	sub, _ := fs.Sub(staticFS, "static")
	c.static = http.StripPrefix(Path+"/static/", http.FileServerFS(sub))
	c.routes()
	return c
}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"when":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"whenPtr": whenPtr,
		"bytes":   humanBytes,
		"deref":   func(s *string) string { return deref(s) },
		"cents":   func(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) },
		"add":     func(a, b int) int { return a + b },
		"int64":   func(i int) int64 { return int64(i) },
		"pct":     pct,
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		out[base] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return out
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ServeHTTP serves the console's pages and files.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			c.logger.ErrorContext(r.Context(), "console: panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	if strings.HasPrefix(r.URL.Path, Path+"/static/") {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		c.static.ServeHTTP(w, r)
		return
	}
	c.mux.ServeHTTP(w, r)
}

// Wrap serves the console beside the REST handler on one listener: the
// console's paths, and the pages a sign-in or a dashboard link opens
// without a frontend (/, /login, /dashboard without an action) sent to the
// console; everything else to next.
func Wrap(next http.Handler, c *Console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == Path || strings.HasPrefix(p, Path+"/") {
			c.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			q := r.URL.Query()
			switch {
			case p == "/" && r.URL.RawQuery == "":
				http.Redirect(w, r, Path+"/", http.StatusFound)
				return
			case p == "/login":
				to := Path + "/login"
				if e := q.Get("error"); e != "" {
					to += "?error=" + url.QueryEscape(e)
				}
				http.Redirect(w, r, to, http.StatusFound)
				return
			case p == billing.DashboardPath && q.Get("action") == "":
				to := Path + "/"
				if id := q.Get("company_id"); id != "" {
					to = Path + "/c/" + url.PathEscape(id)
				}
				http.Redirect(w, r, to, http.StatusFound)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// request is one signed-in request: the principal in its context, the
// form token of its session.
type request struct {
	ctx       context.Context
	principal service.Principal
	csrf      string
	// companyID is the company a page is about (for the next step of a
	// refusal).
	companyID string
}

// page is what every template gets.
type page struct {
	Title   string
	CSRF    string
	Signed  bool
	Nav     string // the current section, for aria-current
	Company *companyNav
	Error   string
	Next    []link // next steps of an error
	Notice  string
	Data    any
	// frames: the page frames this origin (a sandboxed preview).
	frames bool
}

type link struct{ URL, Text string }

type companyNav struct {
	ID, Name, Tab string
}

// session authenticates the page session or sends the browser to sign in
// and come back (GET) or answers 401 (other methods).
func (c *Console) session(w http.ResponseWriter, r *http.Request) (*request, bool) {
	cookie, _ := r.Cookie(identity.PageSessionCookie)
	var raw string
	if cookie != nil {
		raw = cookie.Value
	}
	p, err := c.svc.Identity.SessionFromCookie(r.Context(), raw)
	if err != nil && !models.IsCode(err, models.CodeUnauthenticated) {
		c.fail(w, r, nil, err)
		return nil, false
	}
	if err != nil {
		switch {
		case wantsJSON(r):
			// A page's fetch (found.json, handle-check.json): the error
			// body REST answers, which its script reads.
			c.failJSON(w, models.Errorf(models.CodeUnauthenticated, "Your session ended; sign in again."))
		case r.Method == http.MethodGet:
			http.Redirect(w, r, Path+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
		default:
			c.render(w, r, http.StatusUnauthorized, "error", page{Title: "Signed out", Error: "Your session ended; sign in again.",
				Next: []link{{Path + "/login", "Sign in"}}})
		}
		return nil, false
	}
	return &request{ctx: service.WithPrincipal(r.Context(), p), principal: p, csrf: c.svc.Identity.PageCSRFToken(p)}, true
}

// wantsJSON reports whether the request is a page's fetch of a JSON
// endpoint (its path, or its Accept header, says JSON).
func wantsJSON(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, ".json") || strings.HasPrefix(r.Header.Get("Accept"), "application/json")
}

// post authenticates a form post or fetch: from holdco's own page, with
// the session's form token.
func (c *Console) post(w http.ResponseWriter, r *http.Request) (*request, bool) {
	if !c.svc.Identity.FromOwnPage(r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")) {
		c.render(w, r, http.StatusForbidden, "error", page{Title: "Refused", Error: "This form was not sent from holdco's page; open the page again and retry."})
		return nil, false
	}
	req, ok := c.session(w, r)
	if !ok {
		return nil, false
	}
	token := r.Header.Get("X-CSRF-Token")
	if token == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		// An upload's form names its token in its action, so the body
		// streams to storage unread.
		token = r.URL.Query().Get("csrf")
	}
	if token == "" {
		token = r.PostFormValue("csrf")
	}
	if !c.svc.Identity.CheckPageCSRF(req.principal, token) {
		c.render(w, r, http.StatusForbidden, "error", page{Title: "Refused", Signed: true, CSRF: req.csrf,
			Error: "This form expired or was not sent from this page; open the page again and retry."})
		return nil, false
	}
	return req, true
}

func headers(w http.ResponseWriter, policy string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin (not no-referrer): the browser names this origin on the
	// pages' own posts instead of Origin: null.
	h.Set("Referrer-Policy", "same-origin")
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := c.pages[name]
	if !ok {
		panic("console: no template " + name)
	}
	policy := csp
	if p.frames {
		policy = cspFrames
	}
	headers(w, policy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := t.Execute(w, p); err != nil {
		c.logger.ErrorContext(r.Context(), "console: render", "page", name, "error", err)
	}
}

// fail renders a refused or failed action: a domain error with its status,
// its detail and the next step it calls for; anything else (a database
// failure) logged and shown as a 500 without its text. A refusal shows no
// data of the thing refused.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, req *request, err error) {
	p := page{Title: "Something went wrong"}
	if req != nil {
		p.Signed, p.CSRF = true, req.csrf
	}
	var de *models.Error
	if !errors.As(err, &de) || api.StatusOf(de.Code) >= 500 && de.Code != models.CodeUpstreamUnavailable {
		c.logger.ErrorContext(r.Context(), "console: page failed", "path", r.URL.Path, "error", err)
		p.Error = "Something went wrong on our side; please try again."
		c.render(w, r, http.StatusInternalServerError, "error", p)
		return
	}
	status := api.StatusOf(de.Code)
	p.Error = de.Detail
	companyID := ""
	if req != nil {
		companyID = req.companyID
	}
	p.Title, p.Next = nextSteps(de, status, companyID)
	c.render(w, r, status, "error", p)
}

// nextSteps turns an error into a title and what the founder can do next.
func nextSteps(de *models.Error, status int, companyID string) (string, []link) {
	switch {
	case de.Code == models.CodeInsufficientCredits:
		next := []link{{Path + "/credits", "See your credits and top up"}}
		if links, ok := de.Extra["links"].(map[string]any); ok {
			if u, ok := links["top_up"].(string); ok && u != "" {
				next = append(next, link{u, "Top up now"})
			}
		}
		return "Not enough credits", next
	case de.Code == models.CodeHandleTaken:
		text := "Go back and choose another handle"
		if h, ok := de.Extra["suggested_handle"].(string); ok && h != "" {
			text += " (" + h + " is free)"
		}
		return "Handle taken", []link{{"", text + "."}}
	case status == http.StatusTooManyRequests:
		return "Too many requests", []link{{"", "Wait a minute, then go back and try again."}}
	case status == http.StatusConflict:
		if id, ok := de.Extra["turn_id"].(string); ok && id != "" {
			if companyID != "" {
				return "The agent is busy", []link{{Path + "/c/" + companyID + "/chat?turn=" + url.QueryEscape(id), "Follow the running turn (answer its question or interrupt it)"}}
			}
			return "The agent is busy", []link{{"", "Wait for the running turn to end, or interrupt it from the chat."}}
		}
		return "Not now", []link{{"", "Go back: the page changed meanwhile or something must happen first."}}
	case status == http.StatusForbidden:
		return "Not yours", []link{{Path + "/", "Your companies"}}
	case status == http.StatusNotFound:
		return "Not found", []link{{Path + "/", "Your companies"}}
	case status == http.StatusPaymentRequired:
		return "Payment needed", []link{{Path + "/credits", "Credits and plan"}}
	}
	return "Refused", nil
}
