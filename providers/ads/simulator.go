// Package ads holds the ads provider adapters. Simulator is the offline
// one (the embedded default and the tests): a launched day's budget is
// spent evenly over what is left of the UTC day, impressions and clicks
// follow from the spend and the creative, and a pause stops the spend.
// Campaign records are kept on disk, so a restart loses nothing. A Meta
// Marketing API adapter implements the same methods (service/growth.Ads).
package ads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"holdco/models"
)

// Simulator spends against the day's budget.
type Simulator struct {
	dir string
	now func() time.Time
	mu  sync.Mutex
}

// NewSimulator keeps campaign records under dir (made by the first
// launch: a process that only reads reports writes nothing).
func NewSimulator(dir string, now func() time.Time) (*Simulator, error) {
	if dir == "" {
		return nil, fmt.Errorf("ads: no directory")
	}
	if now == nil {
		now = time.Now
	}
	return &Simulator{dir: dir, now: now}, nil
}

// campaign is a company's record: the day's budget and the spans it ran.
type campaign struct {
	Day      time.Time `json:"day"`
	Budget   int64     `json:"budget"`
	Creative int64     `json:"creative"`
	// Spent is what earlier spans of the day spent; RunningSince is the
	// start of the current span (zero: paused).
	Spent        float64   `json:"spent"`
	RunningSince time.Time `json:"running_since"`
}

var companyID = regexp.MustCompile(`^[0-9a-f-]{36}$`)

func (s *Simulator) path(company string) (string, error) {
	if !companyID.MatchString(company) {
		return "", fmt.Errorf("ads: invalid company id")
	}
	return filepath.Join(s.dir, company+".json"), nil
}

func (s *Simulator) load(company string) (campaign, error) {
	var c campaign
	p, err := s.path(company)
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("ads: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("ads: campaign %s: %w", company, err)
	}
	return c, nil
}

func (s *Simulator) save(company string, c campaign) error {
	p, err := s.path(company)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(c)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("ads: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("ads: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("ads: %w", err)
	}
	return nil
}

// spentAt is what the day has spent by t: the budget left at the start of
// the running span goes out evenly until the day ends.
func spentAt(c campaign, t time.Time) float64 {
	spent := c.Spent
	if c.RunningSince.IsZero() {
		return spent
	}
	end := c.Day.Add(24 * time.Hour)
	if t.After(end) {
		t = end
	}
	left := end.Sub(c.RunningSince)
	if left <= 0 || !t.After(c.RunningSince) {
		return spent
	}
	rest := float64(c.Budget) - spent
	return spent + rest*float64(t.Sub(c.RunningSince))/float64(left)
}

// Launch runs (or keeps running) the day's campaign with its budget and
// creative; launching again the same day swaps the creative and keeps
// what was spent. A new day starts from nothing.
func (s *Simulator) Launch(_ context.Context, l models.AdLaunch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load(l.CompanyID)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	if !c.Day.Equal(l.Day) {
		c = campaign{Day: l.Day}
	}
	c.Spent = spentAt(c, now)
	c.Budget, c.Creative = l.BudgetCredits, l.Creative.Version
	c.RunningSince = now
	if now.Before(l.Day) {
		c.RunningSince = l.Day
	}
	return s.save(l.CompanyID, c)
}

// Pause stops the company's spend (a paused or unknown campaign is fine).
func (s *Simulator) Pause(_ context.Context, company string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load(company)
	if err != nil || c.RunningSince.IsZero() {
		return err
	}
	c.Spent, c.RunningSince = spentAt(c, s.now().UTC()), time.Time{}
	return s.save(company, c)
}

// Report is the day's figures so far (the whole day once it has ended).
func (s *Simulator) Report(_ context.Context, company string, day time.Time) (models.AdReport, error) {
	s.mu.Lock()
	c, err := s.load(company)
	s.mu.Unlock()
	if err != nil || !c.Day.Equal(day) {
		return models.AdReport{}, err
	}
	spent := spentAt(c, s.now().UTC())
	r := models.AdReport{SpentCredits: int64(spent)}
	// About 90–150 impressions per credit and a 1–3 % click rate, fixed
	// per company, day and creative.
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d", company, day.Format(time.DateOnly), c.Creative)
	v := h.Sum32()
	r.Impressions = int64(spent * float64(90+v%61))
	r.Clicks = r.Impressions * int64(10+(v>>8)%21) / 1000
	return r, nil
}
