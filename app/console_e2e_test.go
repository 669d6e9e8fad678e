package app_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/testenv"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the console's screenshots to docs/console")

// TestConsoleInChromium uses the web console in headless Chromium as a
// founder would, on the embedded default with every role: sign in, create
// a company, wait until it is ready, chat with its agent (a question, the
// answer, the turn completes and the credits fall), upload and download a
// file; buy a domain on the local registrar and see it registered; open
// the tasks (creating one), analytics and ads (setting a cap, the preview
// framed) pages; a second user gets a 403 page with no data of the
// company. It logs the time from sign-in to the first completed turn.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "console")
	bin := testenv.Chromium(t)
	a := runApp(t, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_REGISTRAR_DELAY": "2s"}), app.AllRoles...)
	shots := t.TempDir()
	if *updateScreenshots {
		var err error
		shots, err = filepath.Abs("../docs/console")
		require.NoError(t, err)
	}
	out := []byte(node(t, "console", []string{"API=http://" + a.APIAddr(), "SHOTS=" + shots, "CHROMIUM=" + bin}, "console.mjs"))
	var res struct {
		SignedInURL          string         `json:"signed_in_url"`
		CompanyURL           string         `json:"company_url"`
		BalanceBefore        int64          `json:"balance_before"`
		BalanceAfter         int64          `json:"balance_after"`
		Question             string         `json:"question"`
		Answer               string         `json:"answer"`
		FirstTurnEndedMS     int64          `json:"first_turn_ended_ms"`
		FirstCompletedTurnMS int64          `json:"first_completed_turn_ms"`
		DownloadStatus       int            `json:"download_status"`
		DownloadText         string         `json:"download_text"`
		DownloadOrigin       string         `json:"download_origin"`
		Domain               string         `json:"domain"`
		DomainStates         []string       `json:"domain_states"`
		Pages                map[string]int `json:"pages"`
		TaskListed           bool           `json:"task_listed"`
		AdPreviewStatus      int            `json:"ad_preview_status"`
		AdCap                int64          `json:"ad_cap"`
		OtherStatus          int            `json:"other_status"`
		OtherText            string         `json:"other_text"`
		ConsoleErrors        []string       `json:"console_errors"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)

	assert.NotContains(t, res.SignedInURL, "login_code", "the console signs in by the cookie alone")
	assert.Contains(t, res.Question, "what matters most to you")
	assert.NotEmpty(t, res.Answer, "the completed turn's answer is shown")
	assert.Less(t, res.BalanceAfter, res.BalanceBefore, "the turns were charged")
	assert.Equal(t, http.StatusOK, res.DownloadStatus)
	assert.Equal(t, "40 prints, A3", res.DownloadText)
	assert.Equal(t, "http://"+a.SitesAddr(), res.DownloadOrigin, "files are served from the sites origin, never the console's")
	assert.NotEmpty(t, res.Domain, "an available domain in the search grid")
	require.Len(t, res.DomainStates, 2)
	assert.Contains(t, []string{"order_pending", "registered"}, res.DomainStates[0], "paid on the local checkout")
	assert.Equal(t, "registered", res.DomainStates[1], "the status shows until registered")
	assert.Equal(t, map[string]int{"tasks": http.StatusOK, "analytics": http.StatusOK, "ads": http.StatusOK}, res.Pages)
	assert.True(t, res.TaskListed, "the task created is listed")
	assert.Equal(t, http.StatusOK, res.AdPreviewStatus, "the ad's preview loads in its frame")
	assert.Equal(t, int64(3), res.AdCap)
	assert.Equal(t, http.StatusForbidden, res.OtherStatus)
	assert.NotContains(t, res.OtherText, "Lighthouse", "the 403 page shows no data of the company")
	for _, e := range res.ConsoleErrors {
		assert.NotContains(t, e, "Content Security Policy", "no CSP violation in the browser")
		assert.NotContains(t, e, "Uncaught", "no script error in the browser")
	}
	// Page weights are measured on the server's answers (console's
	// TestPageWeights); what a browser counts depends on its cache.
	t.Logf("sign-in to first turn ended (waiting): %d ms; to first completed turn: %d ms; credits %d -> %d",
		res.FirstTurnEndedMS, res.FirstCompletedTurnMS, res.BalanceBefore, res.BalanceAfter)
}
