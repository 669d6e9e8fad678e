package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/founding"
	"holdco/service/identity"
)

// signInReasons are the sentences of a refused sign-in's ?error=.
var signInReasons = map[string]string{
	identity.ReasonAccountDeleted: "An account with this email address was deleted; it cannot sign up again.",
	identity.ReasonOtherBrowser:   "This sign-in was started in another browser or took too long; sign in again here.",
}

type loginData struct{ SignInURL string }

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	if !strings.HasPrefix(next, Path+"/") || strings.HasPrefix(next, "//") {
		next = Path + "/"
	}
	p := page{Title: "Sign in", Data: loginData{SignInURL: "/auth/login?redirect_url=" + url.QueryEscape(next)}}
	if e := r.URL.Query().Get("error"); e != "" {
		p.Error = signInReasons[e]
		if p.Error == "" {
			p.Error = "Sign-in failed; please try again."
		}
	}
	c.render(w, r, http.StatusOK, "login", p)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.post(w, r); !ok {
		return
	}
	cookie, _ := r.Cookie(identity.PageSessionCookie)
	end := c.svc.Identity.LogoutPage(r.Context(), cookie.Value)
	http.SetCookie(w, &http.Cookie{Name: identity.PageSessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil || strings.HasPrefix(c.svc.Core.Config().PublicURL, "https://"), SameSite: http.SameSiteLaxMode})
	p := page{Title: "Signed out", Notice: "You are signed out of holdco."}
	if !strings.HasSuffix(end, "/login") {
		p.Next = []link{{end, "Also sign out of the identity provider"}}
	}
	p.Next = append(p.Next, link{Path + "/login", "Sign in again"})
	c.render(w, r, http.StatusOK, "error", p)
}

// account is the signed-in user's account: the user and the account
// (conglomerate) the pages act on.
type account struct {
	User         *models.User
	Conglomerate service.ConglomerateView
}

// accountSession is the page's session and its account; false once the
// answer (a sign-in redirect or an error page) is written.
func (c *Console) accountSession(w http.ResponseWriter, r *http.Request) (*request, account, bool) {
	req, ok := c.session(w, r)
	if !ok {
		return nil, account{}, false
	}
	acc, err := c.account(req)
	if err != nil {
		c.fail(w, r, req, err)
		return nil, account{}, false
	}
	return req, acc, true
}

func (c *Console) account(req *request) (account, error) {
	me, err := c.svc.Identity.Me(req.ctx)
	if err != nil {
		return account{}, err
	}
	v, err := c.svc.Companies.GetConglomerate(req.ctx, req.principal.ConglomerateID)
	if err != nil {
		return account{}, err
	}
	return account{User: me.User, Conglomerate: v}, nil
}

type companyRow struct {
	companies.CompanyOverview
	SiteURL string
}

type companiesData struct {
	Account   account
	Companies []companyRow
	Credits   billing.CreditState
	Interview *founding.Interview
}

func (c *Console) companiesPage(w http.ResponseWriter, r *http.Request) {
	req, acc, ok := c.accountSession(w, r)
	if !ok {
		return
	}
	cs, err := c.svc.Companies.CompanyOverviews(req.ctx, acc.Conglomerate.ID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	credits, err := c.svc.Billing.Credits(req.ctx, acc.Conglomerate.ID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	d := companiesData{Account: acc, Credits: credits}
	for _, co := range cs {
		d.Companies = append(d.Companies, companyRow{CompanyOverview: co, SiteURL: c.siteURL(co.Company)})
	}
	if iv, err := c.svc.Founding.CurrentFounding(req.ctx); err == nil && iv.State.Open() {
		d.Interview = &iv
	}
	c.render(w, r, http.StatusOK, "companies", page{Title: "Your companies", Signed: true, CSRF: req.csrf, Nav: "companies", Data: d})
}

// siteURL is where the company's site is served (the sites origin).
func (c *Console) siteURL(co models.Company) string {
	base := c.svc.Core.Config().SitesURL
	if base == "" {
		return ""
	}
	return base + "/" + url.PathEscape(co.Handle) + "/"
}

func (c *Console) createCompany(w http.ResponseWriter, r *http.Request) {
	req, ok := c.post(w, r)
	if !ok {
		return
	}
	co, err := c.svc.Companies.CreateCompany(req.ctx, req.principal.ConglomerateID, companies.CompanyInput{
		Name: r.FormValue("name"), Handle: r.FormValue("handle"), Idea: r.FormValue("idea"), IdempotencyKey: r.FormValue("idempotency_key")})
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+co.ID, http.StatusSeeOther)
}

type accountData struct {
	Account account
	Billing billing.BillingState
}

func (c *Console) accountPage(w http.ResponseWriter, r *http.Request) {
	req, acc, ok := c.accountSession(w, r)
	if !ok {
		return
	}
	b, err := c.svc.Billing.Billing(req.ctx, acc.Conglomerate.ID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	c.render(w, r, http.StatusOK, "account", page{Title: "Account", Signed: true, CSRF: req.csrf, Nav: "account", Data: accountData{Account: acc, Billing: b}})
}

func (c *Console) deleteAccount(w http.ResponseWriter, r *http.Request) {
	req, ok := c.post(w, r)
	if !ok {
		return
	}
	if r.FormValue("confirm") != "delete my account" {
		c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "Type “delete my account” to confirm; nothing was deleted."))
		return
	}
	if err := c.svc.Identity.DeleteAccount(req.ctx); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: identity.PageSessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	c.render(w, r, http.StatusOK, "error", page{Title: "Account deleted", Notice: "Your account was deleted and its companies archived."})
}

type creditsData struct {
	Account account
	Billing billing.BillingState
	Ledger  billing.LedgerPage
	Offset  int
	Prev    int
	Next    int
	Links   []link
	Reasons []string
}

const ledgerPage = 20

func (c *Console) creditsPage(w http.ResponseWriter, r *http.Request) {
	req, acc, ok := c.accountSession(w, r)
	if !ok {
		return
	}
	b, err := c.svc.Billing.Billing(req.ctx, acc.Conglomerate.ID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	ledger, err := c.svc.Billing.CreditLedger(req.ctx, acc.Conglomerate.ID, offset, ledgerPage)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	d := creditsData{Account: acc, Billing: b, Ledger: ledger, Offset: offset, Prev: -1, Next: -1}
	if offset > 0 {
		d.Prev = max(offset-ledgerPage, 0)
	}
	if int64(offset+ledgerPage) < ledger.Total {
		d.Next = offset + ledgerPage
	}
	for _, name := range []string{"top_up", "upgrade", "customer_portal"} {
		if u, ok := b.Links[name].(string); ok && u != "" {
			d.Links = append(d.Links, link{u, linkTexts[name]})
		}
	}
	d.Reasons = linkReasons(b.LinkReasons)
	c.render(w, r, http.StatusOK, "credits", page{Title: "Credits", Signed: true, CSRF: req.csrf, Nav: "credits", Data: d})
}

var linkTexts = map[string]string{"top_up": "Top up credits", "upgrade": "Upgrade the plan", "customer_portal": "Billing portal"}

// linkOrder is the order the billing links are named in.
var linkOrder = []string{"top_up", "upgrade", "customer_portal"}

// reasonTexts say why a billing link is missing (billing's
// "<link>_unavailable" values).
var reasonTexts = map[string]string{
	"payments_not_configured": "payments are not configured on this holdco",
	"already_on_plan":         "the account is already on this plan",
	"plan_not_for_sale":       "this plan is not for sale",
	"no_billing_account_yet":  "there is no billing account yet; it opens with the first payment",
}

func reasonText(key string) string {
	if t, ok := reasonTexts[key]; ok {
		return t
	}
	return strings.ReplaceAll(key, "_", " ")
}

// linkReasons are the sentences saying why billing links are missing, in
// the links' order; one sentence when every link is missing for the same
// reason.
func linkReasons(reasons map[string]string) []string {
	var out []string
	same := ""
	for i, name := range linkOrder {
		r, ok := reasons[name+"_unavailable"]
		if !ok || (i > 0 && r != same) {
			same = ""
			break
		}
		same = r
	}
	if same != "" {
		return []string{"Top-ups, plan upgrades and the billing portal are not available: " + reasonText(same) + "."}
	}
	for _, name := range linkOrder {
		if r, ok := reasons[name+"_unavailable"]; ok {
			out = append(out, linkTexts[name]+": "+reasonText(r)+".")
		}
	}
	return out
}

// Founding: the interview as a conversation.

type foundingData struct {
	Interview *founding.Interview
	Question  string
}

func (c *Console) foundingPage(w http.ResponseWriter, r *http.Request) {
	req, ok := c.session(w, r)
	if !ok {
		return
	}
	d := foundingData{}
	iv, err := c.svc.Founding.CurrentFounding(req.ctx)
	switch {
	case models.IsCode(err, models.CodeNotFound):
	case err != nil:
		c.fail(w, r, req, err)
		return
	default:
		d.Interview, d.Question = &iv, iv.Question()
	}
	c.render(w, r, http.StatusOK, "found", page{Title: "Found a company", Signed: true, CSRF: req.csrf, Nav: "found", Data: d})
}

// foundingState is what the founding page polls while the interviewer
// works.
func (c *Console) foundingState(w http.ResponseWriter, r *http.Request) {
	req, ok := c.session(w, r)
	if !ok {
		return
	}
	iv, err := c.svc.Founding.CurrentFounding(req.ctx)
	if err != nil {
		c.failJSON(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": iv.State, "working": iv.SegmentLive || iv.SegmentRunning, "entries": len(iv.Transcript)})
}

func (c *Console) startFounding(w http.ResponseWriter, r *http.Request) {
	req, ok := c.post(w, r)
	if !ok {
		return
	}
	if _, err := c.svc.Founding.StartFounding(req.ctx, founding.StartInput{Idea: r.FormValue("idea")}); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/found", http.StatusSeeOther)
}

func (c *Console) answerFounding(w http.ResponseWriter, r *http.Request) {
	req, ok := c.post(w, r)
	if !ok {
		return
	}
	iv, err := c.svc.Founding.Answer(req.ctx, founding.AnswerInput{Action: r.FormValue("action"), Text: r.FormValue("text"), Handle: r.FormValue("handle")})
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	if iv.State == models.FoundingFounded && iv.CompanyID != nil {
		http.Redirect(w, r, Path+"/c/"+*iv.CompanyID, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Path+"/found", http.StatusSeeOther)
}

func (c *Console) handleCheck(w http.ResponseWriter, r *http.Request) {
	req, ok := c.session(w, r)
	if !ok {
		return
	}
	hc, err := c.svc.Founding.CheckHandle(req.ctx, r.URL.Query().Get("handle"))
	if err != nil {
		c.failJSON(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"normalized": hc.Normalized, "available": hc.Available, "suggestion": hc.Suggestion})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	headers(w, csp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// failJSON answers a fetch with the error body REST answers.
func (c *Console) failJSON(w http.ResponseWriter, err error) {
	var de *models.Error
	if me, ok := err.(*models.Error); ok {
		de = me
	}
	if de == nil {
		c.logger.Error("console: fetch failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_error", "detail": "Something went wrong on our side."})
		return
	}
	writeJSON(w, statusOf(de), models.BodyOf(de))
}
