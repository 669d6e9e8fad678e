package agenttools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/agenttools"
	"holdco/service/usecases"
)

func TestGrowthTools(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	var found agenttools.DomainOptions
	w.call(t, "search_domains", map[string]any{"query": "adatools"}, &found)
	require.Len(t, found.Results, 7)
	assert.Equal(t, "adatools.com", found.Results[0].Domain)

	var panel agenttools.AdPanel
	w.call(t, "get_ad_panel", map[string]any{}, &panel)
	assert.Equal(t, "PAUSED", panel.State)

	raw, _ := json.Marshal(map[string]any{"daily_cap": 2})
	_, err := w.cat.Call(w.agent, w.company, "set_ad_daily_cap", raw)
	require.Error(t, err)
	assert.Equal(t, models.CodeInvalidArgument, domainErr(t, err).Code)
	_, err = w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(conglomerateOf(t, w)), models.EntryAdminAdjustment, 20, "t")
	require.NoError(t, err)
	w.call(t, "set_ad_daily_cap", map[string]any{"daily_cap": 3}, &panel)
	assert.Equal(t, "PENDING", panel.State)
	assert.Equal(t, int64(3), panel.DailyCap)
	w.call(t, "regenerate_ad", map[string]any{}, &panel)
	assert.Equal(t, int64(2), panel.CreativeVersion)
	assert.Equal(t, int64(1), panel.RegenerationsLeft)
}

func conglomerateOf(t *testing.T, w world) string {
	t.Helper()
	c, err := w.e.Svc.GetCompany(w.owner, w.company)
	require.NoError(t, err)
	return c.ConglomerateID
}
