package console

import (
	"context"
	"net/http"
	"strconv"

	"holdco/models"
	"holdco/service/growth"
)

// domainsPageSize is how many domains of the pool one page lists.
const domainsPageSize = 25

type domainsData struct {
	Pool     []growth.PoolEntry
	Pager    pager
	Searched bool
	Query    string
	Results  []growth.SearchResult
	// Pending: a purchase is being registered (the page refreshes).
	Pending bool
	// Checkout is the payment page of a purchase just opened.
	Checkout *growth.Checkout
}

func (c *Console) domainsPage(w http.ResponseWriter, r *http.Request) {
	c.showDomains(w, r, nil)
}

// showDomains renders the pool, the search asked for by ?q= (an empty q
// suggests the company's handle on every TLD) and a checkout just opened.
func (c *Console) showDomains(w http.ResponseWriter, r *http.Request, checkout *growth.Checkout) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	pool, err := c.svc.Growth.ListDomains(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	pg := pageOf(r, len(pool), domainsPageSize)
	d := domainsData{Pool: pool[pg.From:pg.To], Pager: pg, Checkout: checkout}
	for _, p := range pool {
		if p.State == models.DomainOrderPending {
			d.Pending = true
		}
	}
	if q := r.URL.Query(); checkout == nil && q.Has("q") {
		d.Searched, d.Query = true, q.Get("q")
		if d.Results, err = c.svc.Growth.Search(req.ctx, req.companyID, d.Query); err != nil {
			c.fail(w, r, req, err)
			return
		}
	}
	c.render(w, r, http.StatusOK, "domains", c.companyPage(req, "Domains", "domains", co, d))
}

// buyDomain opens the payment of a domain at the price the founder saw (a
// changed price is the use case's 409 with the new one). The payment page
// is a link on the answer, not a redirect: the form's CSP allows posts to
// this origin only, and a payment provider is another.
func (c *Console) buyDomain(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	in := growth.CheckoutInput{Domain: r.FormValue("domain")}
	if p := r.FormValue("price_cents"); p != "" {
		cents, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "price_cents must be a whole number of cents.").WithField("expected_price_cents"))
			return
		}
		in.ExpectedPriceCents = &cents
	}
	co, err := c.svc.Growth.CreateCheckout(req.ctx, req.companyID, in)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	c.showDomains(w, r, &co)
}

func (c *Console) attachDomain(w http.ResponseWriter, r *http.Request) {
	c.changeDomain(w, r, c.svc.Growth.Attach)
}

func (c *Console) detachDomain(w http.ResponseWriter, r *http.Request) {
	c.changeDomain(w, r, c.svc.Growth.Detach)
}

func (c *Console) changeDomain(w http.ResponseWriter, r *http.Request, change func(context.Context, string, string) (growth.PoolEntry, error)) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	if _, err := change(req.ctx, req.companyID, r.PathValue("purchase")); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/domains", http.StatusSeeOther)
}
