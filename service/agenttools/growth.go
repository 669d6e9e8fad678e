package agenttools

import (
	"context"
	"time"

	"holdco/service/growth"
)

// Domains and ads (service/growth).

type SearchDomainsInput struct {
	Query string `json:"query,omitempty" jsonschema:"a bare name (suggestions over several TLDs) or a full domain such as example.com (an exact check); empty suggests from the company's handle" maxLength:"253"`
}

type DomainOption struct {
	Domain     string `json:"domain"`
	Unicode    string `json:"unicode"`
	Available  bool   `json:"available"`
	PriceCents int64  `json:"price_cents"`
	Currency   string `json:"currency"`
	Premium    bool   `json:"premium"`
	Reason     string `json:"reason,omitempty"`
}

type DomainOptions struct {
	Results []DomainOption `json:"results"`
	Note    string         `json:"note"`
}

type GetAdPanelInput struct{}

type AdPanel struct {
	DailyCap          int64     `json:"daily_cap"`
	State             string    `json:"state"`
	SpentToday        int64     `json:"spent_today"`
	ImpressionsToday  int64     `json:"impressions_today"`
	ClicksToday       int64     `json:"clicks_today"`
	TotalSpent        int64     `json:"total_spent"`
	TotalImpressions  int64     `json:"total_impressions"`
	TotalClicks       int64     `json:"total_clicks"`
	Headline          string    `json:"headline,omitempty"`
	Body              string    `json:"body,omitempty"`
	CallToAction      string    `json:"call_to_action,omitempty"`
	CreativeVersion   int64     `json:"creative_version"`
	RegenerationsLeft int64     `json:"regenerations_left"`
	RegenerationReset time.Time `json:"regenerations_reset_at"`
}

type SetAdCapInput struct {
	DailyCap int64 `json:"daily_cap" jsonschema:"credits a day from the account's balance: 0 pauses, 3 to 150 runs the ads" minimum:"0" maximum:"150"`
}

type RegenerateAdInput struct{}

func adPanelOf(p growth.AdPanel) AdPanel {
	a := p.Campaign
	return AdPanel{DailyCap: a.DailyCap, State: string(a.State), SpentToday: p.Today.SpentCredits, ImpressionsToday: p.Today.Impressions,
		ClicksToday: p.Today.Clicks, TotalSpent: a.TotalSpent, TotalImpressions: a.TotalImpressions, TotalClicks: a.TotalClicks,
		Headline: a.Headline, Body: a.Body, CallToAction: a.CallToAction, CreativeVersion: a.CreativeVersion,
		RegenerationsLeft: p.RegenerationsLeft, RegenerationReset: p.RegenerationsResetAt}
}

func registerGrowth(c *Catalog, s *growth.Service) {
	if s == nil {
		return
	}
	Register(c, "search_domains", "Search domain names for the company: availability and first-year price. A bare name suggests it under several TLDs; a full domain is checked exactly. Buying is for the account's people (their dashboard).",
		func(ctx context.Context, companyID string, in SearchDomainsInput) (DomainOptions, error) {
			rs, err := s.Search(ctx, companyID, in.Query)
			if err != nil {
				return DomainOptions{}, err
			}
			out := DomainOptions{Results: make([]DomainOption, 0, len(rs)), Note: "Prices are in cents. A person buys a domain from the company's dashboard."}
			for _, r := range rs {
				out.Results = append(out.Results, DomainOption{Domain: r.Domain, Unicode: r.Unicode, Available: r.Available, PriceCents: r.PriceCents,
					Currency: r.Currency, Premium: r.Premium, Reason: r.Reason})
			}
			return out, nil
		})
	Register(c, "get_ad_panel", "Read the company's ad campaign: daily cap (credits), state (PAUSED, PENDING, ACTIVE, INSUFFICIENT_CREDITS), today's spend and results, lifetime results and the creative.",
		func(ctx context.Context, companyID string, _ GetAdPanelInput) (AdPanel, error) {
			p, err := s.Panel(ctx, companyID)
			return adPanelOf(p), err
		})
	Register(c, "set_ad_daily_cap", "Set the ads' daily cap in credits, funded from the account's balance: 0 pauses, 3 to 150 runs. A cap the balance cannot fund is refused with the numbers.",
		func(ctx context.Context, companyID string, in SetAdCapInput) (AdPanel, error) {
			p, err := s.SetDailyCap(ctx, companyID, in.DailyCap)
			return adPanelOf(p), err
		})
	Register(c, "regenerate_ad", "Write a new ad creative (twice a day at most); a running campaign switches to it at once.",
		func(ctx context.Context, companyID string, _ RegenerateAdInput) (AdPanel, error) {
			p, err := s.Regenerate(ctx, companyID)
			return adPanelOf(p), err
		})
}
