package connector

import (
	"context"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/founding"
)

// BusinessItem is a business of list_businesses.
type BusinessItem struct {
	BusinessRef
	// BalanceCents is the business's own balance (its sales net of refunds
	// and withdrawals), not the account's credits.
	BalanceCents int64 `json:"balance_cents"`
	// OpenQuestions are the agent's questions waiting for the user's
	// answer (send it with send_message).
	OpenQuestions []string `json:"open_questions"`
	AgentChat     bool     `json:"agent_chat"`
}

// BusinessList is list_businesses's answer.
type BusinessList struct {
	Businesses []BusinessItem `json:"businesses"`
}

// ListBusinesses lists the non-archived businesses of every account the
// user belongs to, with a fixed number of queries per account.
func (s *Service) ListBusinesses(ctx context.Context) (BusinessList, error) {
	views, err := s.Companies.MyConglomerates(ctx)
	if err != nil {
		return BusinessList{}, err
	}
	out := BusinessList{Businesses: []BusinessItem{}}
	for _, mine := range views {
		v, err := s.Core.AuthorizeConglomerate(ctx, mine.ID)
		if err != nil {
			return BusinessList{}, err
		}
		cs, err := s.store.Companies().ListCompanies(ctx, v.Scope, false)
		if err != nil {
			return BusinessList{}, err
		}
		ids := make([]string, len(cs))
		for i, c := range cs {
			ids[i] = c.ID
		}
		revenue, err := s.store.Sales().CompaniesRevenue(ctx, v.Scope, ids)
		if err != nil {
			return BusinessList{}, err
		}
		questions, err := s.store.Companies().WaitingQuestions(ctx, v.Scope, ids)
		if err != nil {
			return BusinessList{}, err
		}
		for _, c := range cs {
			item := BusinessItem{BusinessRef: s.refOf(c), BalanceCents: revenue[c.ID].BalanceCents, OpenQuestions: []string{}, AgentChat: !c.ChatDisabled}
			if q, ok := questions[c.ID]; ok {
				item.OpenQuestions = append(item.OpenQuestions, q)
			}
			out.Businesses = append(out.Businesses, item)
		}
	}
	return out, nil
}

// TaskItem is an open task of a business.
type TaskItem struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// LastTurn is the newest turn of a business.
type LastTurn struct {
	TurnID   string `json:"turn_id"`
	Status   string `json:"status"`
	Question string `json:"question,omitempty"`
	// CreatedAt is RFC 3339.
	CreatedAt string `json:"created_at"`
}

// Revenue is a business's earnings in cents.
type Revenue struct {
	Currency              string `json:"currency"`
	LifetimeEarningsCents int64  `json:"lifetime_earnings_cents"`
	BalanceCents          int64  `json:"balance_cents"`
}

// AccountCredits are the account's credits seen from one business.
type AccountCredits struct {
	Balance    int64 `json:"balance"`
	SpentToday int64 `json:"spent_today"`
}

// BusinessDetail is get_business's answer.
type BusinessDetail struct {
	BusinessRef
	Mission string `json:"mission"`
	Idea    string `json:"idea"`
	// Ready: every resource is provisioned (the agent can work).
	Ready     bool           `json:"ready"`
	AgentChat bool           `json:"agent_chat"`
	Revenue   Revenue        `json:"revenue"`
	Credits   AccountCredits `json:"credits"`
	OpenTasks []TaskItem     `json:"open_tasks"`
	LastTurn  *LastTurn      `json:"last_turn"`
}

// GetBusiness reads one business in detail (the company page's reads).
func (s *Service) GetBusiness(ctx context.Context, business string) (BusinessDetail, error) {
	// The dashboard authorizes the business in its summary statement.
	id, err := s.businessID(ctx, business)
	if err != nil {
		return BusinessDetail{}, err
	}
	d, err := s.Companies.Dashboard(ctx, id)
	if err != nil {
		return BusinessDetail{}, businessError(err)
	}
	c := d.Company
	out := BusinessDetail{BusinessRef: s.refOf(c), Mission: c.Mission, Idea: c.Idea, Ready: d.Ready, AgentChat: !c.ChatDisabled,
		Revenue:   Revenue{Currency: d.Revenue.Currency, LifetimeEarningsCents: d.Revenue.LifetimeEarningsCents, BalanceCents: d.Revenue.BalanceCents},
		Credits:   AccountCredits{Balance: d.Credits.Balance, SpentToday: d.Credits.SpentToday},
		OpenTasks: []TaskItem{}}
	for _, t := range d.OpenTasks {
		out.OpenTasks = append(out.OpenTasks, TaskItem{ID: t.ID, Title: t.Title, Status: string(t.Status)})
	}
	if t := d.LastTurn; t != nil {
		out.LastTurn = &LastTurn{TurnID: t.ID, Status: string(t.Status), Question: t.Question, CreatedAt: t.CreatedAt.UTC().Format(timeLayout)}
	}
	return out, nil
}

const timeLayout = "2006-01-02T15:04:05Z07:00"

// BusinessRef is a business by name and address: create_business's and
// pause/activate's answer, and the head of the list items and detail.
type BusinessRef struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Handle       string `json:"handle"`
	Status       string `json:"status"`
	SiteURL      string `json:"site_url"`
	DashboardURL string `json:"dashboard_url"`
}

func (s *Service) refOf(c models.Company) BusinessRef {
	return BusinessRef{ID: c.ID, Name: c.Name, Handle: c.Handle, Status: string(c.Status), SiteURL: s.siteURL(c), DashboardURL: s.dashboardURL(c)}
}

// Created is create_business's answer.
type Created struct {
	Business              BusinessRef        `json:"business"`
	WelcomeCreditsGranted bool               `json:"welcome_credits_granted"`
	FirstPass             founding.FirstPass `json:"first_pass"`
}

// CreateBusiness founds a business from an idea (service/founding keeps
// the rules: plan, credits, idea, handle, the ten-minute retry window).
func (s *Service) CreateBusiness(ctx context.Context, in founding.CreateBusinessInput) (Created, error) {
	if s.Founding == nil {
		return Created{}, noFounding()
	}
	r, err := s.Founding.CreateBusiness(ctx, in)
	if err != nil {
		return Created{}, err
	}
	return Created{Business: s.refOf(r.Business), WelcomeCreditsGranted: r.WelcomeCreditsGranted, FirstPass: r.FirstPass}, nil
}

// FirstPassResult is start_first_pass's answer.
type FirstPassResult struct {
	BusinessID string             `json:"business_id"`
	FirstPass  founding.FirstPass `json:"first_pass"`
}

// StartFirstPass starts the first turn of a business that create_business
// could not start.
func (s *Service) StartFirstPass(ctx context.Context, business string) (FirstPassResult, error) {
	if s.Founding == nil {
		return FirstPassResult{}, noFounding()
	}
	ctx, ac, err := s.resolve(ctx, business)
	if err != nil {
		return FirstPassResult{}, err
	}
	fp, err := s.Founding.StartFirstPass(ctx, ac.ID)
	if err != nil {
		return FirstPassResult{}, err
	}
	return FirstPassResult{BusinessID: ac.ID, FirstPass: fp}, nil
}

// SetPaused pauses a business (no scheduled agent runs; messages still
// work) or activates it again.
func (s *Service) SetPaused(ctx context.Context, business string, paused bool) (BusinessRef, error) {
	ctx, ac, err := s.resolve(ctx, business)
	if err != nil {
		return BusinessRef{}, err
	}
	st := models.CompanyActive
	if paused {
		st = models.CompanyPaused
	}
	c, err := s.Companies.UpdateCompany(ctx, ac.ID, companies.CompanyUpdate{Status: &st})
	if err != nil {
		return BusinessRef{}, err
	}
	return s.refOf(c), nil
}
