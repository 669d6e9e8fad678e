package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"holdco/models"
	"holdco/service/growth"
)

// previewCSP confines the creative's document in the ads page's frame: a
// sandbox (no script, no same-origin, no forms), no network, its own
// inline styles only, framed by the console's pages alone.
const previewCSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

type adsData struct {
	growth.AdPanel
	MinCap, MaxCap int64
	Preview        *growth.Preview // placement size of the framed preview; nil without a creative
}

func (c *Console) adsPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	p, err := c.svc.Growth.Panel(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	d := adsData{AdPanel: p, MinCap: growth.MinDailyCap, MaxCap: growth.MaxDailyCap}
	if p.Campaign.CreativeVersion > 0 {
		pv, err := c.svc.Growth.Preview(req.ctx, req.companyID, "")
		if err != nil && !models.IsCode(err, models.CodeNotFound) {
			c.fail(w, r, req, err)
			return
		}
		if err == nil {
			pv.HTML = "" // the frame loads it from adPreview
			d.Preview = &pv
		}
	}
	pg := c.companyPage(req, "Ads", "ads", co, d)
	pg.frames = true
	c.render(w, r, http.StatusOK, "ads", pg)
}

func (c *Console) setAdCap(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	dailyCap, err := strconv.ParseInt(strings.TrimSpace(r.FormValue("daily_cap")), 10, 64)
	if err != nil {
		c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "The daily cap must be a whole number of credits: 0 pauses, %d to %d runs.", growth.MinDailyCap, growth.MaxDailyCap).WithField("daily_cap"))
		return
	}
	if _, err := c.svc.Growth.SetDailyCap(req.ctx, req.companyID, dailyCap); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/ads", http.StatusSeeOther)
}

func (c *Console) regenerateAd(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	if _, err := c.svc.Growth.Regenerate(req.ctx, req.companyID); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/ads", http.StatusSeeOther)
}

// adPreview serves the creative's document for the ads page's sandboxed
// frame; a refusal is plain text (it shows inside the frame).
func (c *Console) adPreview(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return
	}
	p, err := c.svc.Growth.Preview(req.ctx, req.companyID, r.URL.Query().Get("placement"))
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", previewCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if err != nil {
		var de *models.Error
		status, text := http.StatusInternalServerError, "The preview could not be made; please try again."
		if errors.As(err, &de) && statusOf(de) < 500 {
			status, text = statusOf(de), de.Detail
		} else {
			c.logger.ErrorContext(r.Context(), "console: ad preview", "error", err)
		}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(text))
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(p.HTML))
}
