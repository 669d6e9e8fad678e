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
	"holdco/models"
	"holdco/testenv"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the console's screenshots to docs/console")

// TestConsoleInChromium uses the web console in headless Chromium as a
// founder would, on the embedded default with every role: sign in, found
// a company through the interview (the scripted interviewer asks for the
// name and the customers, then proposes; the founder types another handle,
// checked as typed, and accepts with it), wait until it is ready, chat
// with its agent (a double-clicked send is one turn; a question, the
// answer, the turn completes and the credits fall), upload and download a
// file; buy a domain on the local registrar and see it registered; open
// the tasks (creating one), analytics and ads (setting a cap, the preview
// framed) pages; a second user gets a 403 page with no data of the
// company. It logs the time from sign-in to the first completed turn.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel()
	testenv.SQLiteOnly(t, "the console's pages in a browser; the REST paths they drive run on Postgres in api's tests and app's other end-to-end tests")
	testenv.NodeScripts(t, "console")
	bin := testenv.Chromium(t)
	a := runApp(t, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_REGISTRAR_DELAY": "2s"}), app.AllRoles...)
	// The welcome credits (15) do not cover the founded company's first
	// pass (8), the question (2), its answered turn (8) and the ad cap (3):
	// the account gets credits an operator would grant before the browser
	// signs in for the first time (with the password cliLogin gave the
	// development identity provider).
	base := "http://" + a.APIAddr()
	me := authedJSON(t, "GET", base+"/auth/me", cliLogin(t, base, "founder@example.com"), "", 200)
	_, err := a.Service.Billing.GrantCredits(t.Context(), a.Store.SystemConglomerateScope(me["conglomerate_id"].(string)),
		models.EntryAdminAdjustment, 50, "console e2e")
	require.NoError(t, err)
	shots := t.TempDir()
	if *updateScreenshots {
		shots, err = filepath.Abs("../docs/console")
		require.NoError(t, err)
	}
	out := []byte(node(t, "console", []string{"API=http://" + a.APIAddr(), "SHOTS=" + shots, "CHROMIUM=" + bin}, "console.mjs"))
	var res struct {
		SignedInURL string `json:"signed_in_url"`
		CompanyURL  string `json:"company_url"`
		FoundedVia  string `json:"founded_via"`
		Interview   []struct {
			Question string `json:"question"`
			Answer   string `json:"answer"`
		} `json:"interview"`
		Proposal struct {
			Name   string `json:"name"`
			Handle string `json:"handle"`
		} `json:"proposal"`
		HandleField  string `json:"handle_field"`
		HandleChecks []struct {
			State string `json:"state"`
			Text  string `json:"text"`
		} `json:"handle_checks"`
		DoubleClickMessages  int            `json:"double_click_messages"`
		FirstPass            string         `json:"first_pass"`
		CompanyName          string         `json:"company_name"`
		CompanyHandle        string         `json:"company_handle"`
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
	assert.Equal(t, "interview", res.FoundedVia)
	require.Len(t, res.Interview, 2, "the interviewer asks for the name, then the customers")
	assert.Contains(t, res.Interview[0].Question, "What should the business be called?")
	assert.Contains(t, res.Interview[1].Question, "Who are its first customers")
	assert.Equal(t, "Lighthouse Maps", res.Proposal.Name, "the name answered in the interview")
	assert.Equal(t, "lighthouse-maps", res.Proposal.Handle)
	assert.Equal(t, res.Proposal.Name, res.CompanyName, "the company founded is the proposal's")
	assert.Equal(t, res.Proposal.Handle, res.HandleField, "the handle field holds the proposal's handle")
	require.Len(t, res.HandleChecks, 3)
	assert.Equal(t, "available", res.HandleChecks[0].State, "the proposal's handle checked at once: %+v", res.HandleChecks[0])
	assert.Contains(t, res.HandleChecks[0].Text, "lighthouse-maps is available")
	assert.Equal(t, "invalid", res.HandleChecks[1].State)
	assert.Contains(t, res.HandleChecks[1].Text, "A handle needs at least one letter or digit.", "the API's detail")
	assert.Contains(t, res.HandleChecks[2].Text, "lighthouse-prints is available")
	assert.Equal(t, "lighthouse-prints", res.CompanyHandle, "the company's handle is the one typed on the interview page (normalized)")
	assert.Equal(t, 1, res.DoubleClickMessages, "a double-clicked send is one message, one turn")
	assert.Equal(t, "completed", res.FirstPass, "the founded company's first pass ended before the founder's message")
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
	t.Logf("founded via the %s as %s (%s)", res.FoundedVia, res.CompanyName, res.CompanyHandle)
	t.Logf("sign-in to first turn ended (waiting): %d ms; to first completed turn: %d ms; credits %d -> %d",
		res.FirstTurnEndedMS, res.FirstCompletedTurnMS, res.BalanceBefore, res.BalanceAfter)
}
