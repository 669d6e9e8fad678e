package api

import (
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service/growth"
	"holdco/service/identity"
)

// The local domain checkout: without a payment provider, a domain
// purchase's checkout URL is this page on holdco's own origin. The signed
// link is the credential (it names one purchase, handed to its buyer);
// the confirmation is a same-origin form post.
var domainCheckoutTemplate = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>holdco — Buy {{.Domain}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;line-height:1.5}
button{font-size:1rem;padding:.5rem 1.2rem}.error{color:#a00}.note{color:#555;font-size:.9rem}</style></head>
<body><h1>Buy {{.Domain}}</h1>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
{{if .Domain}}<p>{{.Domain}} for one year: <strong>{{.Price}}</strong>.</p><p>Status: <strong>{{.Status}}</strong></p>{{end}}
{{if .Confirm}}<form method="post"><input type="hidden" name="t" value="{{.Token}}"><button>Confirm the payment</button></form>
<p class="note">Payments are not configured on this server: this local page stands in for the payment provider. Confirming marks the purchase paid and starts its registration.</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
</body></html>`))

type domainPageData struct {
	Domain, Price, Status, Token, Error, Message string
	Confirm                                      bool
}

type domainPages struct {
	svc    *growth.Service
	ids    *identity.Service
	logger *slog.Logger
}

func registerDomainPages(engine *gin.Engine, p *domainPages) {
	engine.GET(growth.LocalCheckoutPath, p.show)
	engine.POST(growth.LocalCheckoutPath, p.confirm)
}

func renderDomainPage(c *gin.Context, status int, d domainPageData) {
	pageHeaders(c, status)
	_ = domainCheckoutTemplate.Execute(c.Writer, d)
}

func (p *domainPages) data(lc growth.LocalCheckout) domainPageData {
	d := domainPageData{Domain: lc.Unicode, Status: string(lc.Purchase.State),
		Price: fmt.Sprintf("%d.%02d %s", lc.Purchase.PriceCents/100, lc.Purchase.PriceCents%100, lc.Purchase.Currency)}
	return d
}

func (p *domainPages) failed(c *gin.Context, err error) {
	var de *models.Error
	if errors.As(err, &de) && StatusOf(de.Code) < 500 {
		renderDomainPage(c, StatusOf(de.Code), domainPageData{Error: de.Detail})
		return
	}
	p.logger.ErrorContext(c.Request.Context(), "domain checkout page failed", "error", err)
	renderDomainPage(c, http.StatusInternalServerError, domainPageData{Error: "Something went wrong on our side; please try again."})
}

func (p *domainPages) show(c *gin.Context) {
	tok := c.Query("t")
	lc, err := p.svc.ReadLocalCheckout(c.Request.Context(), tok)
	if err != nil {
		p.failed(c, err)
		return
	}
	d := p.data(lc)
	d.Token, d.Confirm = tok, lc.Purchase.State == models.DomainAwaitingPayment
	renderDomainPage(c, http.StatusOK, d)
}

func (p *domainPages) confirm(c *gin.Context) {
	if !fromOwnPage(c, p.ids) {
		renderDomainPage(c, http.StatusForbidden, domainPageData{Error: "This form was not sent from holdco's page; open the payment link again."})
		return
	}
	lc, err := p.svc.ConfirmLocalCheckout(c.Request.Context(), c.PostForm("t"))
	if err != nil {
		p.failed(c, err)
		return
	}
	d := p.data(lc)
	d.Message = "Paid. The registrar is registering the domain; the company's domain list shows when it is registered."
	if lc.Purchase.State == models.DomainFailed {
		d.Message = lc.Purchase.FailureReason
	}
	renderDomainPage(c, http.StatusOK, d)
}
