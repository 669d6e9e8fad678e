package console_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
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

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
)

// The tasks, analytics, domains and ads pages: each renders for its
// owner, refuses a post without the session's token, and round-trips
// through the use case REST calls.

func TestNewPagesRefusePostsWithoutTheToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	for _, p := range []string{"/tasks", "/domains/buy", "/ads/cap", "/ads/regenerate", "/tasks/00000000-0000-0000-0000-000000000000/status",
		"/domains/00000000-0000-0000-0000-000000000000/attach", "/domains/00000000-0000-0000-0000-000000000000/detach"} {
		rec := w.post("ada", "same-origin", ada+p, url.Values{"title": {"x"}, "domain": {"ada-maps.com"}, "daily_cap": {"0"}, "status": {"done"}})
		assert.Equal(t, http.StatusForbidden, rec.Code, "POST %s without a token", p)
		assert.Contains(t, rec.Body.String(), "open the page again", p)
		rec = w.post("ada", "cross-site", ada+p, url.Values{"csrf": {w.csrf("ada")}, "title": {"x"}})
		assert.Equal(t, http.StatusForbidden, rec.Code, "POST %s from another site", p)
	}
	assert.NotContains(t, w.get("ada", ada+"/tasks").Body.String(), `data-task=`, "no task was created")
}

func TestTasksRoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	tok := w.csrf("ada")
	rec := w.post("ada", "same-origin", ada+"/tasks", url.Values{"csrf": {tok}, "title": {"Print the maps"}, "description": {"A3 & A4"}, "priority": {"high"}, "due": {"2030-01-31"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	page := w.get("ada", ada+"/tasks").Body.String()
	assert.Contains(t, page, "Print the maps")
	assert.Contains(t, page, "A3 &amp; A4")
	assert.Contains(t, page, "2030-01-31")
	id := regexp.MustCompile(`data-task="([0-9a-f-]{36})"`).FindStringSubmatch(page)
	require.NotNil(t, id)
	assert.Contains(t, page, `<option>cancelled</option>`, "the lifecycle's moves from pending")

	// The use case's rules: a move the lifecycle refuses is its 409.
	rec = w.post("ada", "same-origin", ada+"/tasks/"+id[1]+"/status", url.Values{"csrf": {tok}, "status": {"done"}})
	assert.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `role="alert"`)
	rec = w.post("ada", "same-origin", ada+"/tasks/"+id[1]+"/status", url.Values{"csrf": {tok}, "status": {"cancelled"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	page = w.get("ada", ada+"/tasks?status=cancelled").Body.String()
	assert.Contains(t, page, "Print the maps")
	assert.Contains(t, page, "final")
	assert.NotContains(t, w.get("ada", ada+"/tasks?status=pending").Body.String(), "Print the maps")
	// An empty title is the use case's refusal, in words.
	rec = w.post("ada", "same-origin", ada+"/tasks", url.Values{"csrf": {tok}, "title": {"  "}})
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())

	// Bob cannot move ada's task, even through his own company's page.
	rec = w.post("bob", "same-origin", "/console/c/"+w.company["bob"]+"/tasks/"+id[1]+"/status", url.Values{"csrf": {w.csrf("bob")}, "status": {"pending"}})
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.NotContains(t, rec.Body.String(), "Print the maps")
}

func TestTasksArePaged(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	tok := w.csrf("ada")
	for i := range 27 {
		rec := w.post("ada", "same-origin", ada+"/tasks", url.Values{"csrf": {tok}, "title": {fmt.Sprintf("Task number %02d", i)}})
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	}
	first := w.get("ada", ada+"/tasks").Body.String()
	assert.Equal(t, 25, strings.Count(first, "data-task="))
	assert.Contains(t, first, `href="?page=2"`)
	second := w.get("ada", ada+"/tasks?page=2").Body.String()
	assert.Equal(t, 2, strings.Count(second, "data-task="))
	assert.Contains(t, second, `href="?page=1"`)
}

func TestAnalyticsPageDrawsTheTrendAndCountries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	rec := w.get("ada", ada+"/analytics?range=7d")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	page := rec.Body.String()
	assert.Contains(t, page, `<svg viewBox="0 0 640 220" role="img"`)
	assert.Equal(t, 2, strings.Count(page, "<polyline"), "visitors and page views")
	assert.Equal(t, 7, strings.Count(regexp.MustCompile(`(?s)<details>.*</details>`).FindString(page), "<tr><td>"), "one point a day of the range")
	assert.Contains(t, page, `id="countries"`)
	assert.Contains(t, page, "No visitors in this range.")
	// A range REST refuses is refused here too, in its words.
	rec = w.get("ada", ada+"/analytics?range=2d")
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "range must be one of")
}

func TestDomainsBuyOnTheLocalRegistrar(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	tok := w.csrf("ada")
	search := w.get("ada", ada+"/domains?q=lighthouse-maps")
	require.Equal(t, http.StatusOK, search.Code, search.Body.String())
	buy := regexp.MustCompile(`name="domain" value="([^"]+)"><input type="hidden" name="price_cents" value="(\d+)"`).FindStringSubmatch(search.Body.String())
	require.NotNil(t, buy, "an available domain in the grid: %s", search.Body.String())

	// A price that changed meanwhile is the use case's 409, in words.
	rec := w.post("ada", "same-origin", ada+"/domains/buy", url.Values{"csrf": {tok}, "domain": {buy[1]}, "price_cents": {"1"}})
	assert.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "confirm the new price")

	rec = w.post("ada", "same-origin", ada+"/domains/buy", url.Values{"csrf": {tok}, "domain": {buy[1]}, "price_cents": {buy[2]}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	pay := regexp.MustCompile(`id="pay" href="([^"]+)"`).FindStringSubmatch(rec.Body.String())
	require.NotNil(t, pay, rec.Body.String())
	u, err := url.Parse(html.UnescapeString(pay[1]))
	require.NoError(t, err)
	assert.Equal(t, "/domains/checkout/confirm", u.Path, "the local registrar's payment stands in on holdco's page")
	assert.Contains(t, w.get("ada", ada+"/domains").Body.String(), `<span class="status s-awaiting_payment" data-field="state">awaiting_payment</span>`)

	// Pay on the local page (REST's), then the status shows until registered.
	confirm := w.post("", "same-origin", u.Path, url.Values{"t": {u.Query().Get("t")}})
	require.Equal(t, http.StatusOK, confirm.Code, confirm.Body.String())
	page := w.get("ada", ada+"/domains").Body.String()
	assert.Contains(t, page, `data-domain="`+buy[1]+`"`)
	assert.Contains(t, page, `data-field="state">order_pending</span>`)
	assert.Contains(t, page, `data-refresh=`, "the page refreshes while the domain is registered")

	// Registered (the domain workflow's last step, run here by hand): it
	// serves ada's company; detached it is parked, attached again.
	pool, err := w.svc.Growth.ListDomains(service.WithPrincipal(context.Background(), w.principal("ada")), w.company["ada"])
	require.NoError(t, err)
	require.Len(t, pool, 1)
	purchase := []string{"", pool[0].ID}
	_, err = w.svc.Growth.FinishPurchase(context.Background(), w.store.SystemConglomerateScope(w.cong["ada"]), purchase[1], true, "")
	require.NoError(t, err)
	page = w.get("ada", ada+"/domains").Body.String()
	assert.Contains(t, page, `data-field="state">registered</span> <strong>attached here</strong>`)
	assert.NotContains(t, page, `data-refresh=`)
	rec = w.post("ada", "same-origin", ada+"/domains/"+purchase[1]+"/detach", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Contains(t, w.get("ada", ada+"/domains").Body.String(), `<span class="muted">parked</span>`)
	rec = w.post("ada", "same-origin", ada+"/domains/"+purchase[1]+"/detach", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusConflict, rec.Code, "detaching a parked domain is the use case's 409")
	rec = w.post("ada", "same-origin", ada+"/domains/"+purchase[1]+"/attach", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Contains(t, w.get("ada", ada+"/domains").Body.String(), `<strong>attached here</strong>`)
	rec = w.post("bob", "same-origin", "/console/c/"+w.company["bob"]+"/domains/"+purchase[1]+"/detach", url.Values{"csrf": {w.csrf("bob")}})
	assert.Equal(t, http.StatusForbidden, rec.Code, "bob cannot detach ada's domain")

	// Bob sees none of it.
	rec = w.get("bob", ada+"/domains")
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.NotContains(t, rec.Body.String(), buy[1])
	assert.NotContains(t, w.get("bob", "/console/c/"+w.company["bob"]+"/domains").Body.String(), buy[1])
}

func TestAdCapRoundTripAndPreviewFrame(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ada := "/console/c/" + w.company["ada"]
	tok := w.csrf("ada")
	page := w.get("ada", ada+"/ads")
	require.Equal(t, http.StatusOK, page.Code, page.Body.String())
	assert.Contains(t, page.Body.String(), "0 pauses")
	assert.Contains(t, page.Body.String(), "3 to 150")

	// A cap the balance cannot fund: 402 with the way to credits.
	rec := w.post("ada", "same-origin", ada+"/ads/cap", url.Values{"csrf": {tok}, "daily_cap": {"5"}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `href="/console/credits"`)
	// A cap the rule refuses.
	rec = w.post("ada", "same-origin", ada+"/ads/cap", url.Values{"csrf": {tok}, "daily_cap": {"2"}})
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())

	_, err := w.svc.Billing.GrantCredits(context.Background(), w.store.SystemConglomerateScope(w.cong["ada"]), models.EntryAdminAdjustment, 50, "test")
	require.NoError(t, err)
	rec = w.post("ada", "same-origin", ada+"/ads/cap", url.Values{"csrf": {tok}, "daily_cap": {"5"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	page = w.get("ada", ada+"/ads")
	body := page.Body.String()
	assert.Contains(t, body, `<strong id="ad-cap">5</strong>`)
	assert.Contains(t, body, `<iframe class="preview" id="ad-preview" sandbox="" src="`+ada+`/ads/preview"`)
	assert.Contains(t, page.Header().Get("Content-Security-Policy"), "frame-src 'self'")
	assert.Contains(t, page.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Contains(t, w.get("ada", ada+"/tasks").Header().Get("Content-Security-Policy"), "frame-src 'none'", "other pages frame nothing")

	pv := w.get("ada", ada+"/ads/preview")
	require.Equal(t, http.StatusOK, pv.Code, pv.Body.String())
	csp := pv.Header().Get("Content-Security-Policy")
	assert.True(t, strings.HasPrefix(csp, "sandbox;"), csp)
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "frame-ancestors 'self'")
	assert.NotContains(t, csp, "script-src")
	assert.Contains(t, pv.Body.String(), "Ada Shop")
	other := w.get("bob", ada+"/ads/preview")
	assert.Equal(t, http.StatusForbidden, other.Code)
	assert.NotContains(t, other.Body.String(), "Ada Shop")
}

func TestCompaniesListShowsOwnBalanceAndOpenQuestion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	page := w.get("ada", "/console/").Body.String()
	assert.Contains(t, page, "Own balance")
	assert.Contains(t, page, "0.00")
	assert.NotContains(t, page, "Bob Shop")

	// The agent's question waiting for an answer links the chat.
	scope, err := w.store.SystemCompanyScope(ctx, w.company["ada"])
	require.NoError(t, err)
	turn, err := w.store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "00000000-0000-4000-8000-000000000002", Trigger: models.TriggerMessage, Message: "hi"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
	require.NoError(t, err)
	_, _, err = w.store.Turns().FinishTurn(ctx, scope, turn.ID, "", models.TurnResult{Status: models.TurnWaiting, Question: "Which paper?", EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorSystem, Summary: "A turn asks"})
	require.NoError(t, err)
	page = w.get("ada", "/console/").Body.String()
	assert.Contains(t, page, `<a href="/console/c/`+w.company["ada"]+`/chat" class="question">Which paper?</a>`)
	assert.NotContains(t, w.get("bob", "/console/").Body.String(), "Which paper?")
}

// upload sends a file with the files page's form.
func (w *world) upload(user, companyID, path, name, content string) {
	w.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(w.t, mw.WriteField("path", path))
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(w.t, err)
	_, _ = fw.Write([]byte(content))
	require.NoError(w.t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/console/c/"+companyID+"/files?csrf="+url.QueryEscape(w.csrf(user)), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: identity.PageSessionCookie, Value: w.cookie[user]})
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	require.Equal(w.t, http.StatusSeeOther, rec.Code, rec.Body.String())
}

// TestChatSendsAMessageWithAttachments: the files ticked and the ids
// typed reach the use case as REST's attachments, each once. (Starting the
// turn needs Temporal, which this world has not: past the attachments'
// checks, the message is refused as turns not available.)
func TestChatSendsAMessageWithAttachments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	ada := w.company["ada"]
	scope, err := w.store.SystemCompanyScope(ctx, ada)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, w.store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: ada, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
	_, err = w.svc.Billing.GrantCredits(ctx, w.store.SystemConglomerateScope(w.cong["ada"]), models.EntryAdminAdjustment, 50, "test")
	require.NoError(t, err)
	for i := range 11 {
		w.upload("ada", ada, "prints/", fmt.Sprintf("order-%02d.txt", i), "40 prints")
	}
	w.upload("bob", w.company["bob"], "", "bob.txt", "bob's")
	chat := w.get("ada", "/console/c/"+ada+"/chat").Body.String()
	boxes := regexp.MustCompile(`<input type="checkbox" name="attachments" value="([0-9a-f-]{36})"> prints/order-\d\d.txt`).FindAllStringSubmatch(chat, -1)
	require.Len(t, boxes, 11, "the company's files are offered to attach")
	var ids []string
	for _, b := range boxes {
		ids = append(ids, b[1])
	}
	send := func(attachments ...string) *httptest.ResponseRecorder {
		return w.post("ada", "same-origin", "/console/c/"+ada+"/messages", url.Values{"csrf": {w.csrf("ada")}, "message": {"Plan the print run"}, "attachments": attachments})
	}

	// Ten ticked and the same ten typed: ten attachments, each a file of
	// the company, so the message gets as far as starting its turn.
	rec := send(append(append([]string{}, ids[:10]...), strings.Join(ids[:10], ", "))...)
	assert.Equal(t, http.StatusBadGateway, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "Agent turns are not available")
	// Eleven are more than a message may attach.
	rec = send(ids...)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "At most 10 files")
	// A file of another account is the use case's refusal.
	bobs := regexp.MustCompile(`/files/([0-9a-f-]{36})"`).FindStringSubmatch(w.get("bob", "/console/c/"+w.company["bob"]+"/files").Body.String())
	require.NotNil(t, bobs)
	rec = send(ids[0] + " " + bobs[1])
	assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, rec.Code, rec.Body.String())
	assert.NotContains(t, rec.Body.String(), "bob.txt")
}

// principal is the user's page session, for reading through a use case.
func (w *world) principal(user string) service.Principal {
	w.t.Helper()
	p, err := w.svc.Identity.SessionFromCookie(context.Background(), w.cookie[user])
	require.NoError(w.t, err)
	return p
}
