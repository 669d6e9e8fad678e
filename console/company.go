package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"holdco/api"
	"holdco/models"
	"holdco/service/companies"
	"holdco/service/turns"
)

// companyRequest is a signed-in request about the company in the path.
func (c *Console) companyRequest(w http.ResponseWriter, r *http.Request, post bool) (*request, bool) {
	var req *request
	var ok bool
	if post {
		req, ok = c.post(w, r)
	} else {
		req, ok = c.session(w, r)
	}
	if ok {
		req.companyID = r.PathValue("id")
	}
	return req, ok
}

// openCompany is a company page's GET: the signed-in request and the
// company it names, authorized by the use case (an error page otherwise).
func (c *Console) openCompany(w http.ResponseWriter, r *http.Request) (*request, models.Company, bool) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return nil, models.Company{}, false
	}
	co, err := c.svc.Companies.GetCompany(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return nil, models.Company{}, false
	}
	return req, co, true
}

func (c *Console) companyPage(req *request, title, tab string, co models.Company, data any) page {
	return page{Title: co.Name + " — " + title, Signed: true, CSRF: req.csrf, Nav: "companies",
		Company: &companyNav{ID: co.ID, Name: co.Name, Tab: tab}, Data: data}
}

type dashboardData struct {
	companies.Dashboard
	SiteURL string
}

func (c *Console) dashboardPage(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return
	}
	d, err := c.svc.Companies.Dashboard(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	c.render(w, r, http.StatusOK, "dashboard", c.companyPage(req, "Dashboard", "dashboard", d.Company, dashboardData{Dashboard: d, SiteURL: c.siteURL(d.Company)}))
}

type activityData struct {
	Events []models.ActivityEvent
	Next   string
}

func (c *Console) activityPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	in := companies.ActivityInput{Limit: 25, BeforeID: r.URL.Query().Get("before_id")}
	if b := r.URL.Query().Get("before"); b != "" {
		var err error
		if in.Before, err = time.Parse(time.RFC3339Nano, b); err != nil {
			c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "before is not a time.").WithField("before"))
			return
		}
	}
	p, err := c.svc.Companies.Activity(req.ctx, req.companyID, in)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	d := activityData{Events: p.Events}
	if p.Next != nil {
		d.Next = "?" + url.Values{"before": {p.Next.Before.UTC().Format(time.RFC3339Nano)}, "before_id": {p.Next.BeforeID}}.Encode()
	}
	c.render(w, r, http.StatusOK, "activity", c.companyPage(req, "Activity", "activity", co, d))
}

type chatData struct {
	// Files are the company's files a message may attach (at most
	// attachableShown; more are attached by id).
	Files     []models.CompanyFile
	MoreFiles bool
	MaxAttach int
	Turns     []turns.View
	Next      string
	Waiting   *turns.View // the turn whose question the next message answers
	Active    *turns.View // a turn still running (polled live)
	Credits   int64
	// Key is the send form's Idempotency-Key, new at each render: a form
	// posted twice (a double click, a resend) starts one turn. The
	// page's script replaces it with a key of its own per message.
	Key string
}

const chatPageSize = 10

// attachableShown bounds the files the chat offers to attach.
const attachableShown = 50

func (c *Console) chatPage(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return
	}
	d, err := c.svc.Companies.Dashboard(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	p, err := c.svc.Turns.ListTurns(req.ctx, req.companyID, chatPageSize, r.URL.Query().Get("before"))
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	fl, err := c.svc.Files.List(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	data := chatData{Credits: d.Credits.Balance, MaxAttach: turns.MaxAttachments, Key: uuid.NewString()}
	data.Files = fl.Files[:min(len(fl.Files), attachableShown)]
	data.MoreFiles = len(fl.Files) > attachableShown
	// Oldest first, as a conversation reads.
	for i := len(p.Turns) - 1; i >= 0; i-- {
		data.Turns = append(data.Turns, p.Turns[i])
	}
	if p.Next != "" {
		data.Next = "?before=" + url.QueryEscape(p.Next)
	}
	if r.URL.Query().Get("before") == "" && len(p.Turns) > 0 {
		latest := p.Turns[0]
		switch {
		case latest.Turn.Status == models.TurnWaiting:
			data.Waiting = &latest
		case latest.Turn.Status.Active():
			data.Active = &latest
		}
	}
	c.render(w, r, http.StatusOK, "chat", c.companyPage(req, "Chat", "chat", d.Company, data))
}

func (c *Console) sendMessage(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	// As REST's attachments: file ids, here from the files ticked and
	// the ids typed (separated by commas or spaces), each once; the use
	// case checks them and their number.
	var attachments []string
	seen := map[string]bool{}
	_ = r.ParseForm() // parsed already by the token check; a no-op then
	for _, v := range r.PostForm["attachments"] {
		for _, a := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			if !seen[a] {
				seen[a] = true
				attachments = append(attachments, a)
			}
		}
	}
	// The form's idempotency_key is REST's Idempotency-Key: the same
	// message posted again with it answers the turn the first post
	// started (one turn), whatever runs now.
	st, err := c.svc.Turns.SendMessage(req.ctx, req.companyID, turns.Message{Text: r.FormValue("message"), Attachments: attachments,
		IdempotencyKey: r.FormValue("idempotency_key")})
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/chat?turn="+st.TurnID, http.StatusSeeOther)
}

// turnState is what the chat polls while a turn runs.
func (c *Console) turnState(w http.ResponseWriter, r *http.Request) {
	req, ok := c.session(w, r)
	if !ok {
		return
	}
	v, err := c.svc.Turns.GetTurn(req.ctx, r.PathValue("turn"))
	if err != nil {
		c.failJSON(w, err)
		return
	}
	t := v.Turn
	out := map[string]any{"status": t.Status, "text": t.Text, "answer": t.Answer, "question": t.Question,
		"credits_cost": v.CreditsCost, "elapsed_seconds": v.ElapsedSeconds, "active": t.Status.Active()}
	if t.ErrorCode != "" {
		out["error"] = map[string]string{"error": t.ErrorCode, "detail": t.ErrorDetail}
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *Console) interruptTurn(w http.ResponseWriter, r *http.Request) {
	req, ok := c.post(w, r)
	if !ok {
		return
	}
	v, err := c.svc.Turns.InterruptTurn(req.ctx, r.PathValue("turn"))
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+v.Turn.CompanyID+"/chat", http.StatusSeeOther)
}

// Settings: the agent's chat switch, pause, API key, archive.

type settingsData struct {
	Company models.Company
	Key     string
}

func (c *Console) settingsPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	c.render(w, r, http.StatusOK, "settings", c.companyPage(req, "Settings", "settings", co, settingsData{Company: co}))
}

func (c *Console) saveSettings(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	chat := r.FormValue("agent_chat") == "on"
	status := models.CompanyStatus(r.FormValue("status"))
	u := companies.CompanyUpdate{AgentChat: &chat}
	if status != "" {
		u.Status = &status
	}
	if _, err := c.svc.Companies.UpdateCompany(req.ctx, req.companyID, u); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/settings", http.StatusSeeOther)
}

func (c *Console) revealAPIKey(w http.ResponseWriter, r *http.Request) {
	c.apiKey(w, r, false)
}

func (c *Console) rotateAPIKey(w http.ResponseWriter, r *http.Request) {
	c.apiKey(w, r, true)
}

// apiKey shows the company key on a page answered to a post (never in a
// URL; the page is not cached).
func (c *Console) apiKey(w http.ResponseWriter, r *http.Request, rotate bool) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	co, err := c.svc.Companies.GetCompany(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	var key companies.CompanyKey
	if rotate {
		key, err = c.svc.Companies.RotateCompanyAPIKey(req.ctx, req.companyID)
	} else {
		key, err = c.svc.Companies.CompanyAPIKey(req.ctx, req.companyID)
	}
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	c.render(w, r, http.StatusOK, "settings", c.companyPage(req, "Settings", "settings", co, settingsData{Company: co, Key: key.Key}))
}

func (c *Console) archiveCompany(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	co, err := c.svc.Companies.GetCompany(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	if r.FormValue("confirm") != co.Handle {
		c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "Type the company's handle (%s) to confirm; nothing was archived.", co.Handle))
		return
	}
	if err := c.svc.Companies.ArchiveCompany(req.ctx, req.companyID); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/", http.StatusSeeOther)
}

func statusOf(e *models.Error) int { return api.StatusOf(e.Code) }
