package ads_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/ads"
)

func TestSimulatorSpendsAgainstTheBudget(t *testing.T) {
	ctx := context.Background()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	now := day.Add(12 * time.Hour)
	dir := t.TempDir()
	s, err := ads.NewSimulator(dir, func() time.Time { return now })
	require.NoError(t, err)
	co := uuid.NewString()
	require.NoError(t, s.Launch(ctx, models.AdLaunch{CompanyID: co, Day: day, BudgetCredits: 10, Creative: models.AdCreative{Version: 1}}))
	now = now.Add(6 * time.Hour) // half of what was left
	r, err := s.Report(ctx, co, day)
	require.NoError(t, err)
	assert.Equal(t, int64(5), r.SpentCredits)
	assert.Positive(t, r.Impressions)
	require.NoError(t, s.Pause(ctx, co))
	now = now.Add(3 * time.Hour)
	r, err = s.Report(ctx, co, day)
	require.NoError(t, err)
	assert.Equal(t, int64(5), r.SpentCredits, "paused: no spend")
	// Resumed (after a restart): the rest goes out by midnight, never more than the budget.
	s2, err := ads.NewSimulator(dir, func() time.Time { return now })
	require.NoError(t, err)
	require.NoError(t, s2.Launch(ctx, models.AdLaunch{CompanyID: co, Day: day, BudgetCredits: 10, Creative: models.AdCreative{Version: 2}}))
	now = day.Add(30 * time.Hour)
	r, err = s2.Report(ctx, co, day)
	require.NoError(t, err)
	assert.Equal(t, int64(10), r.SpentCredits)
	assert.LessOrEqual(t, r.Clicks, r.Impressions/30)
	r, err = s2.Report(ctx, co, day.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Zero(t, r.SpentCredits, "a day never launched")
}
