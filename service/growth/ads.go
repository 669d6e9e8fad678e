package growth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
	"holdco/workflows/contract"
)

// Ad cap rules: 0 pauses, MinDailyCap to MaxDailyCap (credits a day) runs.
const (
	MinDailyCap          = 3
	MaxDailyCap          = 150
	RegenerationsPerDay  = 2
	DefaultPlacement     = "MOBILE_FEED_STANDARD"
	adReservationKeyBase = "ads/"
)

// AdPanel is the company's ad panel.
type AdPanel struct {
	Campaign models.AdCampaign
	// Exists: the company has set a cap or made a creative before.
	Exists bool
	// Today is the day's figures so far (from the ads network while the
	// campaign runs).
	Today models.AdReport
	// RegenerationsLeft today; RegenerationsResetAt is the next UTC
	// midnight.
	RegenerationsLeft    int64
	RegenerationsResetAt time.Time
}

// Panel reads the ad panel. It changes nothing and never opens a payment.
func (s *Service) Panel(ctx context.Context, companyID string) (AdPanel, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return AdPanel{}, err
	}
	a, err := s.store.Growth().AdCampaign(ctx, ac.Scope)
	if errors.Is(err, models.ErrNotFound) {
		return s.panelOf(ctx, models.AdCampaign{CompanyID: ac.ID, ConglomerateID: ac.ConglomerateID, State: models.AdPaused}, false), nil
	}
	if err != nil {
		return AdPanel{}, err
	}
	return s.panelOf(ctx, a, true), nil
}

func (s *Service) panelOf(ctx context.Context, a models.AdCampaign, exists bool) AdPanel {
	today := dayOf(s.now())
	p := AdPanel{Campaign: a, Exists: exists, RegenerationsLeft: RegenerationsPerDay, RegenerationsResetAt: today.Add(24 * time.Hour)}
	if a.RegenerationDay.Equal(today) {
		p.RegenerationsLeft = max(0, RegenerationsPerDay-a.RegenerationsDay)
	}
	if a.Day.Equal(today) {
		p.Today = models.AdReport{SpentCredits: a.SpentToday, Impressions: a.ImpressionsToday, Clicks: a.ClicksToday}
		if a.ReservedToday > 0 && s.ads != nil {
			if r, err := s.ads.Report(ctx, a.CompanyID, today); err == nil {
				p.Today = r
			} else {
				s.logger.WarnContext(ctx, "ads: today's figures not read", "company", a.CompanyID, "error", err)
			}
		}
	}
	return p
}

// CheckDailyCap is the cap rule: 0 or MinDailyCap–MaxDailyCap.
func CheckDailyCap(c int64) error {
	if c == 0 || (c >= MinDailyCap && c <= MaxDailyCap) {
		return nil
	}
	return models.Errorf(models.CodeInvalidArgument, "daily_cap must be 0 (pauses the ads) or from %d to %d credits a day; %d is not allowed.", MinDailyCap, MaxDailyCap, c).
		WithField("daily_cap").With("allowed", fmt.Sprintf("0, %d-%d", MinDailyCap, MaxDailyCap))
}

// SetDailyCap saves the daily cap (0 pauses, 3–150 runs, funded from the
// account's credits) and signals-with-start the company's reconciler,
// which reserves and runs. A positive cap the balance cannot fund today is
// refused with insufficient_credits and the exact numbers.
func (s *Service) SetDailyCap(ctx context.Context, companyID string, dailyCap int64) (AdPanel, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return AdPanel{}, err
	}
	if err := CheckDailyCap(dailyCap); err != nil {
		return AdPanel{}, err
	}
	today := dayOf(s.now())
	if dailyCap > 0 {
		cur, err := s.store.Growth().AdCampaign(ctx, ac.Scope)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return AdPanel{}, err
		}
		if !cur.Day.Equal(today) || cur.ReservedToday == 0 {
			bal, err := s.store.Companies().CompanyAccountCredits(ctx, ac.Scope, today)
			if err != nil {
				return AdPanel{}, err
			}
			if bal.Balance < dailyCap {
				cong, err := s.store.Identity().GetConglomerate(ctx, ac.ConglomerateID)
				if err != nil {
					return AdPanel{}, err
				}
				return AdPanel{}, s.billing.InsufficientCredits(cong, bal.Balance, dailyCap).With("daily_cap", dailyCap)
			}
		}
	}
	actor := service.ActorOf(ctx)
	a, err := s.store.Growth().UpdateAdCampaign(ctx, ac.Scope, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		before := a.State
		a.DailyCap, a.ReconcilePending = dailyCap, true
		switch {
		case dailyCap == 0:
			a.State = models.AdPaused
		case a.State == models.AdPaused:
			a.State = models.AdPending
		}
		if a.CreativeVersion == 0 && dailyCap > 0 {
			setCreative(a, GenerateCreative(ac.Company, 1))
		}
		return stateEvents(before, *a, actor), nil
	})
	if err != nil {
		return AdPanel{}, err
	}
	s.signalAds(ctx, ac.Scope, a)
	return s.panelOf(ctx, a, true), nil
}

// Regenerate makes a new creative (at most RegenerationsPerDay a UTC day,
// then rate_limited with when it resets); a running campaign swaps to it.
//
// A call (service.Call in ctx) is recorded on the campaign with the
// creative it made, in the same transaction: the same call made again
// after a crash finds it and answers the panel without regenerating (nor
// using up a regeneration).
func (s *Service) Regenerate(ctx context.Context, companyID string) (AdPanel, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return AdPanel{}, err
	}
	today := dayOf(s.now())
	effectID := service.EffectID(ctx, "ad_creative")
	a, err := s.store.Growth().UpdateAdCampaign(ctx, ac.Scope, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		if service.Keyed(ctx) && a.RegenerationEffectID == effectID {
			return nil, nil // made by this call already
		}
		a.RegenerationEffectID = effectID
		if !a.RegenerationDay.Equal(today) {
			a.RegenerationDay, a.RegenerationsDay = today, 0
		}
		if a.RegenerationsDay >= RegenerationsPerDay {
			resets := today.Add(24 * time.Hour)
			return nil, models.Errorf(models.CodeRateLimited, "The creative can be regenerated %d times a day; the limit resets at %s.", RegenerationsPerDay, resets.Format(time.RFC3339)).
				With("resets_at", resets.Format(time.RFC3339)).With("limit", RegenerationsPerDay)
		}
		a.RegenerationsDay++
		setCreative(a, GenerateCreative(ac.Company, a.CreativeVersion+1))
		if a.DailyCap > 0 {
			a.ReconcilePending = true // hot swap
		}
		return nil, nil
	})
	if err != nil {
		return AdPanel{}, err
	}
	if a.ReconcilePending {
		s.signalAds(ctx, ac.Scope, a)
	}
	return s.panelOf(ctx, a, true), nil
}

func setCreative(a *models.AdCampaign, c models.AdCreative) {
	a.CreativeVersion, a.Headline, a.Body, a.CallToAction, a.LinkURL = c.Version, c.Headline, c.Body, c.CallToAction, c.LinkURL
}

func creativeOf(a models.AdCampaign) models.AdCreative {
	return models.AdCreative{Version: a.CreativeVersion, Headline: a.Headline, Body: a.Body, CallToAction: a.CallToAction, LinkURL: a.LinkURL}
}

// stateEvents is the activity event of a state change (none when equal).
func stateEvents(before models.AdState, a models.AdCampaign, actor models.ActivityActor) []models.ActivityInput {
	if before == a.State {
		return nil
	}
	summary := map[models.AdState]string{
		models.AdPaused:              "Ads paused",
		models.AdPending:             fmt.Sprintf("Ads starting at %d credits a day", a.DailyCap),
		models.AdActive:              fmt.Sprintf("Ads running at %d credits a day", a.DailyCap),
		models.AdInsufficientCredits: fmt.Sprintf("Ads stopped: the balance cannot fund today's %d credits", a.DailyCap),
	}[a.State]
	return []models.ActivityInput{{Kind: models.ActivityAdStateChanged, Actor: actor, Summary: summary, Subject: string(a.State),
		Data: map[string]any{"from": string(before), "to": string(a.State), "daily_cap": a.DailyCap}}}
}

// Preview renders the creative for a placement (default
// MOBILE_FEED_STANDARD) as a self-contained HTML document. An unknown
// placement is invalid_argument with the list; no creative, or one that
// cannot be rendered, is not_found.
func (s *Service) Preview(ctx context.Context, companyID, placement string) (Preview, error) {
	if placement == "" {
		placement = DefaultPlacement
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Preview{}, err
	}
	pl, ok := placementByName(placement)
	if !ok {
		return Preview{}, models.Errorf(models.CodeInvalidArgument, "placement must be one of %s.", strings.Join(PlacementNames(), ", ")).
			WithField("placement").With("allowed", PlacementNames())
	}
	a, err := s.store.Growth().AdCampaign(ctx, ac.Scope)
	if errors.Is(err, models.ErrNotFound) || (err == nil && a.CreativeVersion == 0) {
		return Preview{}, models.Errorf(models.CodeNotFound, "The company has no ad creative yet; set a daily cap or regenerate to make one.")
	}
	if err != nil {
		return Preview{}, err
	}
	html, err := renderPreview(pl, ac.Company.Name, creativeOf(a))
	if err != nil {
		return Preview{}, models.Errorf(models.CodeNotFound, "The creative cannot be rendered for %s.", pl.Name).Wrap(err)
	}
	return Preview{Placement: pl.Name, Width: pl.Width, Height: pl.Height, HTML: html, CreativeVersion: a.CreativeVersion}, nil
}

// Worker side: the reconciler's activity.

func reservationKey(companyID string, day time.Time) string {
	return adReservationKeyBase + companyID + "/" + day.Format(time.DateOnly)
}

// Reconcile brings the company's campaign to its cap for the day: it
// closes an earlier day (its figures into the totals, the unspent part of
// its reservation refunded once), then with cap 0 pauses; otherwise it
// reserves the day's cap from credits once (AD_SPEND through the credit
// rules, keyed by day) and runs the campaign, or stops at
// INSUFFICIENT_CREDITS when the balance (or the account's daily credit
// cap) cannot fund it. A cap change after the day's reservation applies
// from the next day; a creative change swaps at once.
func (s *Service) Reconcile(ctx context.Context, scope store.CompanyScope, cong store.ConglomerateScope, day time.Time) (contract.ReconcileAdsResult, error) {
	if s.ads == nil {
		return contract.ReconcileAdsResult{}, models.Errorf(models.CodeUpstreamUnavailable, "No ads network is configured on this server.")
	}
	day = dayOf(day)
	a, err := s.store.Growth().AdCampaign(ctx, scope)
	if errors.Is(err, models.ErrNotFound) {
		return contract.ReconcileAdsResult{State: models.AdPaused}, nil
	}
	if err != nil {
		return contract.ReconcileAdsResult{}, err
	}
	if !a.Day.IsZero() && a.Day.Before(day) {
		if a, err = s.closeDay(ctx, scope, cong, a, day); err != nil {
			return contract.ReconcileAdsResult{}, err
		}
	}
	if a.DailyCap == 0 {
		if err := s.ads.Pause(ctx, scope.ID()); err != nil {
			return contract.ReconcileAdsResult{}, err
		}
		a, err = s.setState(ctx, scope, models.AdPaused, nil)
		return contract.ReconcileAdsResult{State: a.State, Reserved: a.ReservedToday > 0}, err
	}
	if !a.Day.Equal(day) || a.ReservedToday == 0 {
		dailyCap := a.DailyCap
		key := reservationKey(scope.ID(), day)
		_, charged, err := s.billing.SpendOnce(ctx, cong, billing.Usage{CompanyID: scope.ID(), Type: models.EntryAdSpend, Credits: dailyCap, Key: key})
		if models.IsCode(err, models.CodeInsufficientCredits) || models.IsCode(err, models.CodeRateLimited) {
			if err := s.ads.Pause(ctx, scope.ID()); err != nil {
				return contract.ReconcileAdsResult{}, err
			}
			a, err = s.setState(ctx, scope, models.AdInsufficientCredits, func(a *models.AdCampaign) { a.Day = day })
			return contract.ReconcileAdsResult{State: a.State, DailyCap: a.DailyCap}, err
		}
		if err != nil {
			return contract.ReconcileAdsResult{}, err
		}
		if !charged {
			// The day was charged by an attempt that did not record it (a
			// crash between the two); the cap may have changed since. The
			// reservation is what was charged: the day's refund gives back
			// at most that.
			if dailyCap, err = s.billing.ChargedCredits(ctx, cong, key); err != nil {
				return contract.ReconcileAdsResult{}, err
			}
		}
		if a, err = s.setState(ctx, scope, a.State, func(a *models.AdCampaign) { a.Day, a.ReservedToday = day, dailyCap }); err != nil {
			return contract.ReconcileAdsResult{}, err
		}
	}
	if err := s.ads.Launch(ctx, models.AdLaunch{CompanyID: scope.ID(), Day: day, BudgetCredits: a.ReservedToday, Creative: creativeOf(a)}); err != nil {
		return contract.ReconcileAdsResult{}, err
	}
	a, err = s.setState(ctx, scope, models.AdActive, nil)
	return contract.ReconcileAdsResult{State: a.State, DailyCap: a.DailyCap, Reserved: true}, err
}

// closeDay ends a.Day: the network's figures for it go into the totals
// and the unspent reservation is refunded (keyed by day: once).
func (s *Service) closeDay(ctx context.Context, scope store.CompanyScope, cong store.ConglomerateScope, a models.AdCampaign, day time.Time) (models.AdCampaign, error) {
	closing := a.Day
	var r models.AdReport
	if a.ReservedToday > 0 {
		var err error
		if r, err = s.ads.Report(ctx, scope.ID(), closing); err != nil {
			return a, err
		}
		r.SpentCredits = min(r.SpentCredits, a.ReservedToday)
		if unspent := a.ReservedToday - r.SpentCredits; unspent > 0 {
			if _, err := s.billing.GrantOnce(ctx, cong, scope.ID(), models.EntryRefund, unspent, "ads unspent "+closing.Format(time.DateOnly),
				"ads-refund/"+scope.ID()+"/"+closing.Format(time.DateOnly)); err != nil {
				return a, err
			}
		}
	}
	return s.store.Growth().UpdateAdCampaign(ctx, scope, func(c *models.AdCampaign) ([]models.ActivityInput, error) {
		if !c.Day.Equal(closing) {
			return nil, nil // closed by an earlier attempt
		}
		c.TotalSpent += r.SpentCredits
		c.TotalImpressions += r.Impressions
		c.TotalClicks += r.Clicks
		c.Day, c.ReservedToday, c.SpentToday, c.ImpressionsToday, c.ClicksToday = day, 0, 0, 0, 0
		return nil, nil
	})
}

// setState stores the campaign's state (with its event when it changed)
// and whatever more change sets.
func (s *Service) setState(ctx context.Context, scope store.CompanyScope, st models.AdState, change func(*models.AdCampaign)) (models.AdCampaign, error) {
	return s.store.Growth().UpdateAdCampaign(ctx, scope, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		before := a.State
		if change != nil {
			change(a)
		}
		// A cap set to 0 meanwhile wins over the state this reconcile reached.
		if a.DailyCap == 0 {
			st = models.AdPaused
		}
		a.State = st
		return stateEvents(before, *a, models.ActorSystem), nil
	})
}
