package console_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/api"
	"holdco/console"
	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/providers/registrar"
	"holdco/service"
	"holdco/service/identity"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is the console beside the REST API on one handler, as the api
// role serves it without a frontend, with two signed-in users (page
// sessions only), each with a company.
type world struct {
	t       *testing.T
	h       http.Handler
	svc     *usecases.Services
	store   *store.Store
	cookie  map[string]string
	company map[string]string
	cong    map[string]string
}

func newWorld(t *testing.T) *world { return newWorldWith(t, usecases.Options{}) }

// newWorldWith is newWorld with the use cases' options (Blobs and
// Registrar are the world's).
func newWorldWith(t *testing.T, opts usecases.Options) *world {
	t.Helper()
	ctx := context.Background()
	st := testenv.NewStore(t)
	idp := testenv.NewIdP()
	mux := http.NewServeMux()
	sites := httptest.NewServer(mux)
	t.Cleanup(sites.Close)
	blobs, err := local.New(t.TempDir(), []byte("console-test-blob-signing-key-0123456789ab"), sites.URL)
	require.NoError(t, err)
	mux.Handle(local.PathPrefix, blobs.Handler())
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := registrar.NewLocal(t.TempDir(), 0, nil)
	require.NoError(t, err)
	svc, err := usecases.New(ctx, service.Config{PublicURL: "http://holdco.test", SitesURL: sites.URL}, st, idp, logger, withWorld(opts, blobs, reg))
	require.NoError(t, err)
	w := &world{t: t, svc: svc, store: st, cookie: map[string]string{}, company: map[string]string{}, cong: map[string]string{}}
	w.h = console.Wrap(api.New(api.Deps{Logger: logger, Service: svc}), console.New(console.Deps{Service: svc, Logger: logger}))
	for _, u := range []struct{ name, email, co, handle string }{{"ada", "ada@example.com", "Ada Shop", "ada-shop"}, {"bob", "bob@example.com", "Bob Shop", "bob-shop"}} {
		start, err := svc.Identity.BeginWebLogin(ctx, "/console/", "", "")
		require.NoError(t, err)
		res, err := svc.Identity.CompleteWebLogin(ctx, idp.Approve(start.State, u.email, u.name), start.State, start.Binding)
		require.NoError(t, err)
		assert.NotContains(t, res.RedirectURL, "login_code", "the console signs in by the cookie alone")
		assert.Equal(t, "http://holdco.test/console/", res.RedirectURL)
		w.cookie[u.name] = res.Cookie
		p, err := svc.Identity.SessionFromCookie(ctx, res.Cookie)
		require.NoError(t, err)
		w.cong[u.name] = p.ConglomerateID
		c, _, err := st.Companies().CreateCompanyToProvision(ctx, st.SystemConglomerateScope(p.ConglomerateID),
			models.Company{Name: u.co, Handle: u.handle, Status: models.CompanyActive}, true, nil)
		require.NoError(t, err)
		w.company[u.name] = c.ID
	}
	return w
}

func withWorld(opts usecases.Options, blobs *local.Store, reg *registrar.Local) usecases.Options {
	opts.Blobs, opts.Registrar = blobs, reg
	return opts
}

// get is a browser's navigation.
func (w *world) get(user, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Sec-Fetch-Site", "none")
	if c := w.cookie[user]; c != "" {
		req.AddCookie(&http.Cookie{Name: identity.PageSessionCookie, Value: c})
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

// post is a form post from a page of site (same-origin: the console's own).
func (w *world) post(user, site, path string, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", site)
	if c := w.cookie[user]; c != "" {
		req.AddCookie(&http.Cookie{Name: identity.PageSessionCookie, Value: c})
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token a page of the user carries.
func (w *world) csrf(user string) string {
	rec := w.get(user, "/console/account")
	require.Equal(w.t, http.StatusOK, rec.Code, rec.Body.String())
	m := csrfRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(w.t, m, "a form token on the page")
	return m[1]
}

func TestCompanyPagesOfAnotherAccountAnswer403WithNoData(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := w.company["ada"]
	for _, p := range []string{"", "/chat", "/activity", "/files", "/docs", "/docs/notes", "/settings", "/tasks", "/analytics", "/domains", "/domains?q=ada", "/ads"} {
		path := "/console/c/" + ada + p
		own := w.get("ada", path)
		assert.Equal(t, http.StatusOK, own.Code, "%s as ada: %s", path, own.Body.String())
		assert.Contains(t, own.Body.String(), "Ada Shop", path)

		rec := w.get("bob", path)
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s as bob", path)
		assert.NotContains(t, rec.Body.String(), "Ada Shop", "no data of ada's company on %s", path)
		assert.NotContains(t, rec.Body.String(), "ada-shop", "no data of ada's company on %s", path)
	}
	// Posts too: bob cannot message, edit, upload to or archive ada's company.
	tok := w.csrf("bob")
	for _, p := range []string{"/messages", "/docs/notes", "/settings", "/archive", "/api-key", "/tasks", "/domains/buy", "/ads/cap", "/ads/regenerate"} {
		rec := w.post("bob", "same-origin", "/console/c/"+ada+p, url.Values{"csrf": {tok}, "message": {"hi"}, "content": {"x"}, "confirm": {"ada-shop"},
			"title": {"steal"}, "domain": {"ada-maps.com"}, "daily_cap": {"0"}})
		assert.Equal(t, http.StatusForbidden, rec.Code, "POST %s as bob: %s", p, rec.Body.String())
	}
	assert.Equal(t, http.StatusOK, w.get("ada", "/console/c/"+ada).Code, "ada's company is not archived")
}

func TestSignedOutBrowserIsSentToSignIn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := w.get("", "/console/c/"+w.company["ada"]+"/chat")
	require.Equal(t, http.StatusFound, rec.Code)
	assert.Equal(t, "/console/login?next="+url.QueryEscape("/console/c/"+w.company["ada"]+"/chat"), rec.Header().Get("Location"))
	login := w.get("", rec.Header().Get("Location"))
	require.Equal(t, http.StatusOK, login.Code)
	assert.Contains(t, login.Body.String(), `/auth/login?redirect_url=`+url.QueryEscape("/console/c/"+w.company["ada"]+"/chat"))
	// holdco's other landing pages lead to the console.
	assert.Equal(t, "/console/", w.get("", "/").Header().Get("Location"))
	assert.Equal(t, "/console/login?error=other_browser", w.get("", "/login?error=other_browser").Header().Get("Location"))
	assert.Equal(t, "/console/c/"+w.company["ada"], w.get("", "/dashboard?conglomerate_id=x&company_id="+w.company["ada"]).Header().Get("Location"))
	assert.NotContains(t, w.get("", "/dashboard?action=archive_business").Header().Get("Location"), "/console", "the action pages stay REST's")

	// A page's fetch of a JSON endpoint hears 401 in the error body its
	// script reads, not a page.
	for _, path := range []string{"/console/found.json", "/console/handle-check.json?handle=x"} {
		rec := w.get("", path)
		require.Equal(t, http.StatusUnauthorized, rec.Code, path)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"), path)
		assert.Contains(t, rec.Body.String(), `"error":"unauthenticated"`, path)
		assert.Contains(t, rec.Body.String(), "sign in again", path)
	}
}

func TestPagesRunUnderAStrictCSPWithoutInlineScript(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	script := regexp.MustCompile(`<script[^>]*>`)
	ada := "/console/c/" + w.company["ada"]
	for _, path := range []string{"/console/", "/console/account", "/console/credits", "/console/found", ada, ada + "/chat", ada + "/tasks", ada + "/analytics", ada + "/domains", ada + "/ads"} {
		rec := w.get("ada", path)
		require.Equal(t, http.StatusOK, rec.Code, path)
		csp := rec.Header().Get("Content-Security-Policy")
		assert.Contains(t, csp, "script-src 'self'", path)
		assert.Contains(t, csp, "frame-ancestors 'none'", path)
		assert.NotContains(t, csp, "unsafe-inline", path)
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"), path)
		for _, tag := range script.FindAllString(rec.Body.String(), -1) {
			assert.Contains(t, tag, `src="/console/static/`, "only the console's own script files on %s", path)
		}
		assert.NotRegexp(t, `\son[a-z]+=`, rec.Body.String(), "no inline event handlers on %s", path)
		assert.Equal(t, 1, strings.Count(rec.Body.String(), `aria-current="page"`), "one link is the current page on %s", path)
	}
	js := w.get("", "/console/static/console.js")
	require.Equal(t, http.StatusOK, js.Code)
	assert.Contains(t, js.Header().Get("Content-Type"), "javascript")
}

func TestFormsNeedTheConsolesOwnPageAndTheSessionsToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.csrf("ada")
	form := url.Values{"csrf": {tok}, "name": {"Tea Time"}, "idea": {"Sell tea"}}

	rec := w.post("ada", "cross-site", "/console/companies", form)
	assert.Equal(t, http.StatusForbidden, rec.Code, "a post from a sandboxed tenant page")
	assert.Contains(t, rec.Body.String(), "not sent from holdco")
	rec = w.post("ada", "same-origin", "/console/companies", url.Values{"name": {"Tea Time"}})
	assert.Equal(t, http.StatusForbidden, rec.Code, "no token")
	rec = w.post("ada", "same-origin", "/console/companies", url.Values{"csrf": {w.csrf("bob")}, "name": {"Tea Time"}})
	assert.Equal(t, http.StatusForbidden, rec.Code, "another session's token")

	rec = w.post("ada", "same-origin", "/console/companies", form)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc := rec.Header().Get("Location")
	require.True(t, strings.HasPrefix(loc, "/console/c/"), loc)
	page := w.get("ada", loc)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), "Tea Time")
	list := w.get("ada", "/console/")
	assert.Contains(t, list.Body.String(), "Tea Time")
	assert.NotContains(t, list.Body.String(), "Bob Shop")

	// The API's refusal in words: a duplicate handle.
	rec = w.post("ada", "same-origin", "/console/companies", url.Values{"csrf": {tok}, "name": {"Other"}, "handle": {"bob-shop"}})
	assert.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "role=\"alert\"")
}

func TestDocumentsAndFilesRoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := w.company["ada"]
	tok := w.csrf("ada")

	rec := w.post("ada", "same-origin", "/console/c/"+ada+"/docs/plan", url.Values{"csrf": {tok}, "title": {"The plan"}, "content": {"Sell maps & tea"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	doc := w.get("ada", "/console/c/"+ada+"/docs/plan")
	assert.Contains(t, doc.Body.String(), "Sell maps &amp; tea")
	assert.Contains(t, w.get("ada", "/console/c/"+ada+"/docs").Body.String(), "The plan")

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("path", "notes/"))
	fw, err := mw.CreateFormFile("file", "hello.txt")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("hello, console"))
	require.NoError(t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/console/c/"+ada+"/files?csrf="+url.QueryEscape(tok), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: identity.PageSessionCookie, Value: w.cookie["ada"]})
	up := httptest.NewRecorder()
	w.h.ServeHTTP(up, req)
	require.Equal(t, http.StatusSeeOther, up.Code, up.Body.String())

	list := w.get("ada", "/console/c/"+ada+"/files?prefix=notes/")
	require.Contains(t, list.Body.String(), "notes/hello.txt")
	id := regexp.MustCompile(`/console/c/` + ada + `/files/([0-9a-f-]{36})"`).FindStringSubmatch(list.Body.String())
	require.NotNil(t, id)
	dl := w.get("ada", "/console/c/"+ada+"/files/"+id[1])
	require.Equal(t, http.StatusSeeOther, dl.Code)
	resp, err := http.Get(dl.Header().Get("Location"))
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "hello, console", string(got), "the download link serves the file from the sites origin")
	assert.Equal(t, http.StatusForbidden, w.get("bob", "/console/c/"+ada+"/files/"+id[1]).Code)

	rec = w.post("ada", "same-origin", "/console/c/"+ada+"/files/"+id[1]+"/delete", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.NotContains(t, w.get("ada", "/console/c/"+ada+"/files").Body.String(), "hello.txt")
}

func TestSignOutEndsThePageSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := w.post("ada", "same-origin", "/console/logout", url.Values{"csrf": {w.csrf("ada")}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Header().Get("Set-Cookie"), identity.PageSessionCookie+"=;")
	assert.Equal(t, http.StatusFound, w.get("ada", "/console/").Code, "the old cookie no longer signs in")
	assert.Equal(t, http.StatusOK, w.get("bob", "/console/").Code, "another user stays signed in")
}

// TestPageWeights logs what each main page weighs (its HTML, plus the one
// script and style sheet every page loads) and holds each under 100 KB.
func TestPageWeights(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	assets := 0
	for _, f := range []string{"/console/static/console.js", "/console/static/console.css"} {
		rec := w.get("", f)
		require.Equal(t, http.StatusOK, rec.Code, f)
		assets += rec.Body.Len()
	}
	ada := "/console/c/" + w.company["ada"]
	weights := map[string]int{}
	for name, path := range map[string]string{"sign-in": "/console/login", "companies": "/console/", "found": "/console/found", "credits": "/console/credits",
		"account": "/console/account", "dashboard": ada, "chat": ada + "/chat", "activity": ada + "/activity", "files": ada + "/files",
		"documents": ada + "/docs", "settings": ada + "/settings", "tasks": ada + "/tasks", "analytics": ada + "/analytics", "domains": ada + "/domains",
		"ads": ada + "/ads"} {
		rec := w.get("ada", path)
		require.Equal(t, http.StatusOK, rec.Code, path)
		weights[name] = rec.Body.Len() + assets
		assert.Less(t, weights[name], 100<<10, name)
	}
	t.Logf("page weights in bytes (HTML + %d of script and style): %v", assets, weights)
}

// TestFoundingPageAfterAnInterviewEndedOffersAnother: once the founder's
// last interview ended (founded or rejected), /console/found shows how it
// ended and the idea form again, as StartFounding allows a new interview
// then; the page used to show the ended interview alone, with no way to
// start another from the console.
func TestFoundingPageAfterAnInterviewEndedOffersAnother(t *testing.T) {
	for _, state := range []models.FoundingState{models.FoundingFounded, models.FoundingRejected} {
		t.Run(string(state), func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			p, err := w.svc.Identity.SessionFromCookie(ctx, w.cookie["ada"])
			require.NoError(t, err)

			rec := w.get("ada", "/console/found")
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Contains(t, rec.Body.String(), `action="/console/found"`, "no interview yet: the idea form")

			at := time.Now()
			f := models.FoundingInterview{UserID: p.UserID, Kind: models.FoundingNew, State: state, Idea: "Hand-drawn maps of lighthouses", EndedAt: &at,
				Transcript: []models.FoundingEntry{{Role: models.RoleFounder, Kind: models.EntryIdea, Text: "Hand-drawn maps of lighthouses", At: at}}}
			company := w.company["ada"]
			if state == models.FoundingFounded {
				f.CompanyID = &company
			} else {
				f.RejectedReason = "The idea is too short to found a business on."
			}
			_, err = w.store.Founding().CreateFoundingInterview(ctx, w.store.SystemConglomerateScope(w.cong["ada"]), f)
			require.NoError(t, err)

			rec = w.get("ada", "/console/found")
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			body := rec.Body.String()
			assert.Contains(t, body, "This interview is "+string(state)+".")
			if state == models.FoundingFounded {
				assert.Contains(t, body, `href="/console/c/`+company+`"`, "the founded company is linked")
			} else {
				assert.Contains(t, body, f.RejectedReason)
			}
			assert.Contains(t, body, `action="/console/found"`, "the idea form for another interview")
			assert.Contains(t, body, `id="idea"`)
			assert.NotContains(t, body, `action="/console/found/answer"`, "nothing to answer in an ended interview")
		})
	}
}

// The credits page says in words why a billing link is missing: one
// sentence when payments are off, each link by its name otherwise.
func TestCreditsPageSaysWhyLinksAreMissing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := w.get("ada", "/console/credits")
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	assert.Contains(t, body, "<li>Top-ups, plan upgrades and the billing portal are not available: payments are not configured on this holdco.</li>")
	assert.NotContains(t, body, "<li>:", "every reason names its link")

	assert.Equal(t, []string{"Top up credits: payments are not configured on this holdco.", "Billing portal: there is no billing account yet; it opens with the first payment."},
		console.LinkReasons(map[string]string{"customer_portal_unavailable": "no_billing_account_yet", "top_up_unavailable": "payments_not_configured"}))
}
