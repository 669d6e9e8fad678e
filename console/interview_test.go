package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/usecases"
	"holdco/testenv"
)

// proposing stores an open interview of the user showing its proposal.
func (w *world) proposing(user string, kind models.FoundingKind, companyID *string) {
	w.t.Helper()
	at := time.Now()
	_, err := w.store.Founding().CreateFoundingInterview(context.Background(), w.store.SystemConglomerateScope(w.cong[user]), models.FoundingInterview{
		UserID: w.principal(user).UserID, Kind: kind, State: models.FoundingReviewing, Idea: "Hand-drawn maps of lighthouses", CompanyID: companyID,
		Proposal:   &models.FoundingProposal{Name: "Lighthouse Maps", Handle: "lighthouse-maps", Mission: "Maps of lighthouses.", FoundingPlan: "# Plan"},
		Transcript: []models.FoundingEntry{{Role: models.RoleInterviewer, Kind: models.EntryProposal, Text: "I propose Lighthouse Maps.", At: at}}})
	require.NoError(w.t, err)
}

// TestInterviewPageChecksTheHandleAsYouType: a proposal shows, in the
// accept form, a labelled handle input prefilled with the proposal's
// handle, wired to the handle check (at once and as the founder types)
// with a live hint; the check answers free, taken with a suggestion, or
// the API's reason; the accept form sends the handle to the use case,
// whose refusals are shown in words. An upgrade keeps its handle: no
// input.
func TestInterviewPageChecksTheHandleAsYouType(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.proposing("ada", models.FoundingNew, nil)

	rec := w.get("ada", "/console/found")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	body := rec.Body.String()
	accept := regexp.MustCompile(`(?s)<form[^>]*id="accept-form"[^>]*>.*?</form>`).FindString(body)
	require.NotEmpty(t, accept, "the accept form")
	assert.Contains(t, accept, `<input type="hidden" name="action" value="accept">`)
	assert.Contains(t, accept, `<label for="handle">`)
	input := regexp.MustCompile(`<input id="handle"[^>]*>`).FindString(accept)
	require.NotEmpty(t, input, "the handle input in the accept form")
	for _, attr := range []string{`name="handle"`, `value="lighthouse-maps"`, `data-handle-check`, `data-check-now`, `aria-describedby="handle-hint"`, `autocomplete="off"`} {
		assert.Contains(t, input, attr)
	}
	assert.Regexp(t, `<span id="handle-hint"[^>]*aria-live="polite"`, accept, "the check's answer is announced")
	assert.Contains(t, accept, `<button id="accept">`)

	// The script checks [data-handle-check] inputs at the API the page
	// names, at once with data-check-now, and shows each state.
	js := w.get("", "/console/static/console.js").Body.String()
	for _, s := range []string{`'[data-handle-check]'`, `'/console/handle-check.json?handle='`, `'data-check-now'`, `'aria-describedby'`,
		`'available'`, `'taken'`, `'invalid'`, `h.suggestion`, `err.message`} {
		assert.Contains(t, js, s)
	}

	check := func(handle string) (int, map[string]any) {
		req := w.get("ada", "/console/handle-check.json?handle="+url.QueryEscape(handle))
		var out map[string]any
		require.NoError(t, json.Unmarshal(req.Body.Bytes(), &out), req.Body.String())
		return req.Code, out
	}
	code, free := check("Lighthouse Prints")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"normalized": "lighthouse-prints", "available": true, "suggestion": "lighthouse-prints"}, free)
	code, taken := check("ada-shop")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, false, taken["available"])
	assert.Equal(t, "ada-shop-2", taken["suggestion"])
	code, invalid := check("--")
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, "A handle needs at least one letter or digit.", invalid["detail"])

	// The accept form's handle reaches the use case: refused in words,
	// and the interview is still open to accept.
	post := func(form url.Values) string {
		form.Set("csrf", w.csrf("ada"))
		rec := w.post("ada", "same-origin", "/console/found/answer", form)
		return strings.Join([]string{http.StatusText(rec.Code), rec.Body.String()}, "\n")
	}
	got := post(url.Values{"action": {"accept"}, "handle": {"--"}})
	assert.Contains(t, got, http.StatusText(http.StatusUnprocessableEntity))
	assert.Contains(t, got, "A handle needs at least one letter or digit.")
	got = post(url.Values{"action": {"accept"}, "handle": {"Ada Shop"}})
	assert.Contains(t, got, http.StatusText(http.StatusConflict))
	assert.Contains(t, got, "Handle taken")
	assert.Contains(t, got, "ada-shop-2 is free")
	got = post(url.Values{"action": {"answer"}, "text": {"Shorter"}, "handle": {"maps"}})
	assert.Contains(t, got, "A handle comes only with action accept")
	got = post(url.Values{"action": {"accept"}, "handle": {"Lighthouse Prints"}})
	assert.Contains(t, got, "Founding interviews are not available on this server", "a free handle passes: the workflow (not in this world) is next")
	assert.Contains(t, w.get("ada", "/console/found").Body.String(), `id="accept-form"`, "nothing changed")

	// An upgrade keeps the company's handle: no input.
	company := w.company["bob"]
	w.proposing("bob", models.FoundingV3Upgrade, &company)
	up := w.get("bob", "/console/found").Body.String()
	assert.Contains(t, up, `id="accept-form"`)
	assert.NotContains(t, up, `id="handle"`)
}

// TestChatPostedTwiceWithOneKeyStartsOneTurn: the chat's send form
// carries an Idempotency-Key made at each render; the form posted twice
// with it (a double click without the script, a resend) starts one turn
// and both posts lead to it, where a post with another key meets the
// running turn (409). The script makes a key per message and disables
// the button while it is sent.
func TestChatPostedTwiceWithOneKeyStartsOneTurn(t *testing.T) {
	t.Parallel()
	// Temporal without a worker: the turn starts and stays running.
	tmp := testenv.NewTemporal(t, nil)
	w := newWorldWith(t, usecases.Options{Temporal: tmp.Client})
	ctx := context.Background()
	ada := w.company["ada"]
	scope, err := w.store.SystemCompanyScope(ctx, ada)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, w.store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: ada, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
	_, err = w.svc.Billing.GrantCredits(ctx, w.store.SystemConglomerateScope(w.cong["ada"]), models.EntryAdminAdjustment, 50, "test")
	require.NoError(t, err)

	keyRE := regexp.MustCompile(`<input type="hidden" name="idempotency_key" value="([0-9a-f-]{36})">`)
	chat := func() (page, key string) {
		rec := w.get("ada", "/console/c/"+ada+"/chat")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		m := keyRE.FindStringSubmatch(rec.Body.String())
		require.NotNil(t, m, "the send form carries its key")
		return rec.Body.String(), m[1]
	}
	_, key := chat()
	_, other := chat()
	assert.NotEqual(t, key, other, "a key per render")

	send := func(key string) *http.Response {
		rec := w.post("ada", "same-origin", "/console/c/"+ada+"/messages", url.Values{"csrf": {w.csrf("ada")}, "message": {"Plan the print run"}, "idempotency_key": {key}})
		return rec.Result()
	}
	first, second := send(key), send(key)
	require.Equal(t, http.StatusSeeOther, first.StatusCode)
	require.Equal(t, http.StatusSeeOther, second.StatusCode, "the second post answers the first one's turn")
	assert.Equal(t, first.Header.Get("Location"), second.Header.Get("Location"))
	assert.Contains(t, first.Header.Get("Location"), "/chat?turn=")
	list, err := w.svc.Turns.ListTurns(service.WithPrincipal(ctx, w.principal("ada")), ada, 10, "")
	require.NoError(t, err)
	assert.Len(t, list.Turns, 1, "one turn")
	assert.Equal(t, http.StatusConflict, send(other).StatusCode, "another key is another message: the turn runs")

	js := w.get("", "/console/static/console.js").Body.String()
	for _, s := range []string{`'#send-form'`, `'input[name=idempotency_key]'`, `crypto.randomUUID()`, `button.disabled = true`, `e.preventDefault()`} {
		assert.Contains(t, js, s)
	}
}
