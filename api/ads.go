package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/growth"
)

// MetaAdsPanelResponse is the company's ad panel.
type MetaAdsPanelResponse struct {
	CompanyID string              `json:"company_id" format:"uuid"`
	DailyCap  int64               `json:"daily_cap" doc:"Credits a day, funded from the account's balance: 0 is paused, 3 to 150 runs."`
	State     string              `json:"state" enum:"PAUSED,PENDING,ACTIVE,INSUFFICIENT_CREDITS" doc:"PENDING: a cap is saved and the reconciler has not run yet. INSUFFICIENT_CREDITS: the balance cannot fund today's cap; a top-up or a new positive cap resumes it by itself."`
	Today     AdDayResponse       `json:"today"`
	Results   AdResultsResponse   `json:"results" doc:"Lifetime results of the closed days."`
	Creative  *AdCreativeResponse `json:"creative" doc:"null until a cap is first set or a creative generated."`
	// Regeneration limit.
	RegenerationsLeft    int64      `json:"regenerations_left" doc:"Creative regenerations left today (2 a UTC day)."`
	RegenerationsResetAt time.Time  `json:"regenerations_reset_at"`
	StateChangedAt       *time.Time `json:"state_changed_at"`
	Placements           []string   `json:"placements" doc:"Placements GET …/meta-ads/preview renders."`
}

// AdDayResponse is today's campaign (UTC day).
type AdDayResponse struct {
	Date            string `json:"date" example:"2026-03-02"`
	ReservedCredits int64  `json:"reserved_credits" doc:"The day's cap taken from the balance (AD_SPEND); what it does not spend is refunded when the day closes."`
	SpentCredits    int64  `json:"spent_credits"`
	Impressions     int64  `json:"impressions"`
	Clicks          int64  `json:"clicks"`
}

// AdResultsResponse are lifetime figures.
type AdResultsResponse struct {
	SpentCredits int64 `json:"spent_credits"`
	Impressions  int64 `json:"impressions"`
	Clicks       int64 `json:"clicks"`
}

// AdCreativeResponse is what the ad shows.
type AdCreativeResponse struct {
	Version      int64  `json:"version"`
	Headline     string `json:"headline"`
	Body         string `json:"body"`
	CallToAction string `json:"call_to_action"`
}

// SetDailyCapRequest sets the ads' daily cap.
type SetDailyCapRequest struct {
	DailyCap int64 `json:"daily_cap" doc:"0 pauses; 3 to 150 credits a day runs the ads. 1, 2 and over 150 answer 422. A cap the balance cannot fund answers 402 insufficient_credits with balance and needed."`
}

// MetaAdPreviewResponse is the creative rendered for a placement.
type MetaAdPreviewResponse struct {
	Placement       string `json:"placement"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
	CreativeVersion int64  `json:"creative_version"`
	HTML            string `json:"html" doc:"A self-contained HTML document (no scripts, no network; the tenant's text is escaped). Embed it only in a sandboxed frame: <iframe sandbox srcdoc=…>, which gives it an opaque origin of its own."`
}

func toAdPanel(p growth.AdPanel) MetaAdsPanelResponse {
	a := p.Campaign
	day := p.RegenerationsResetAt.Add(-24 * time.Hour)
	r := MetaAdsPanelResponse{CompanyID: a.CompanyID, DailyCap: a.DailyCap, State: string(a.State),
		Today:             AdDayResponse{Date: day.Format(time.DateOnly), SpentCredits: p.Today.SpentCredits, Impressions: p.Today.Impressions, Clicks: p.Today.Clicks},
		Results:           AdResultsResponse{SpentCredits: a.TotalSpent, Impressions: a.TotalImpressions, Clicks: a.TotalClicks},
		RegenerationsLeft: p.RegenerationsLeft, RegenerationsResetAt: p.RegenerationsResetAt, Placements: growth.PlacementNames()}
	if a.Day.Equal(day) {
		r.Today.ReservedCredits = a.ReservedToday
	}
	if a.CreativeVersion > 0 {
		r.Creative = &AdCreativeResponse{Version: a.CreativeVersion, Headline: a.Headline, Body: a.Body, CallToAction: a.CallToAction}
	}
	if p.Exists && !a.StateChangedAt.IsZero() {
		at := a.StateChangedAt
		r.StateChangedAt = &at
	}
	return r
}

type adHandlers struct{ svc *growth.Service }

func registerAdRoutes(api huma.API, h *adHandlers) {
	tags := []string{"ads"}
	huma.Register(api, huma.Operation{OperationID: "get-meta-ads", Method: http.MethodGet, Path: "/companies/{company_id}/meta-ads",
		Tags: tags, Summary: "The ad panel", Security: bearerSecurity,
		Description: "Cap, state, today's spend and results, lifetime results and the creative. Reading it changes nothing and never creates a payment URL."}, h.get)
	huma.Register(api, huma.Operation{OperationID: "set-meta-ads-cap", Method: http.MethodPut, Path: "/companies/{company_id}/meta-ads",
		Tags: tags, Summary: "Set the ads' daily cap", Security: bearerSecurity,
		Description: "0 pauses; 3 to 150 credits a day runs the ads, funded from the account's credit balance. Only validates, saves and signals the company's reconciler (the workflow ads:<company_id>), " +
			"which reserves each UTC day's cap from credits (AD_SPEND) and refunds what the day did not spend. A cap of 1, 2 or over 150 answers 422 naming the allowed values; a cap the balance cannot fund 402 insufficient_credits with balance and needed."}, h.setCap)
	huma.Register(api, huma.Operation{OperationID: "regenerate-meta-ad", Method: http.MethodPost, Path: "/companies/{company_id}/meta-ads/regenerate",
		Tags: tags, Summary: "Regenerate the creative", Security: bearerSecurity,
		Description: "Writes the next creative; a running campaign swaps to it at once. Twice a UTC day; the third answers 429 rate_limited with `resets_at`."}, h.regenerate)
	huma.Register(api, huma.Operation{OperationID: "preview-meta-ad", Method: http.MethodGet, Path: "/companies/{company_id}/meta-ads/preview",
		Tags: tags, Summary: "Preview the creative", Security: bearerSecurity,
		Description: "The creative as embeddable HTML for a placement. An unknown placement answers 422 with the list; no creative, or one that cannot be rendered, 404."}, h.preview)
}

type adPanelOutput struct{ Body MetaAdsPanelResponse }

func (h *adHandlers) get(ctx context.Context, in *companyIDInput) (*adPanelOutput, error) {
	p, err := h.svc.Panel(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &adPanelOutput{Body: toAdPanel(p)}, nil
}

type setCapInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      SetDailyCapRequest
}

func (h *adHandlers) setCap(ctx context.Context, in *setCapInput) (*adPanelOutput, error) {
	p, err := h.svc.SetDailyCap(ctx, in.CompanyID, in.Body.DailyCap)
	if err != nil {
		return nil, err
	}
	return &adPanelOutput{Body: toAdPanel(p)}, nil
}

func (h *adHandlers) regenerate(ctx context.Context, in *companyIDInput) (*adPanelOutput, error) {
	p, err := h.svc.Regenerate(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &adPanelOutput{Body: toAdPanel(p)}, nil
}

type previewInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Placement string `query:"placement" maxLength:"64" doc:"Default MOBILE_FEED_STANDARD."`
}

type previewOutput struct {
	// The answer is data for a sandboxed frame, never a page of this
	// origin.
	CSP     string `header:"Content-Security-Policy"`
	NoSniff string `header:"X-Content-Type-Options"`
	Body    MetaAdPreviewResponse
}

func (h *adHandlers) preview(ctx context.Context, in *previewInput) (*previewOutput, error) {
	p, err := h.svc.Preview(ctx, in.CompanyID, in.Placement)
	if err != nil {
		return nil, err
	}
	return &previewOutput{CSP: "sandbox; default-src 'none'; frame-ancestors 'none'", NoSniff: "nosniff",
		Body: MetaAdPreviewResponse{Placement: p.Placement, Width: p.Width, Height: p.Height, CreativeVersion: p.CreativeVersion, HTML: p.HTML}}, nil
}
