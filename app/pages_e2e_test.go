package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/devoidc"
	"holdco/providers/statichost"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/testenv"
)

// tenantPage is a company site's page as the sites listener serves it
// (sandboxed, an opaque origin), written by an attacker: links to the
// attacker's own sign-in callbacks, and holdco's two forms.
var tenantPage = template.Must(template.New("tenant").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>A company site</title></head><body>
<p><a id="api-callback" href="{{.APICallback}}">Claim your prize</a></p>
<p><a id="oidc-callback" href="{{.OIDCCallback}}">Connect your assistant</a></p>
<form method="post" action="{{.API}}/auth/cli/device"><input type="hidden" name="user_code" value="{{.UserCode}}">
<input type="hidden" name="csrf" value="forged"><button id="device-approve" name="decision" value="approve">Approve</button></form>
<form method="post" action="{{.API}}/domains/checkout/confirm"><input type="hidden" name="t" value="{{.CheckoutToken}}">
<button id="checkout-confirm">Pay</button></form>
</body></html>`))

// TestOwnPagesInChromium clicks holdco's pages in headless Chromium as a
// user would: the device approval and the local domain checkout are
// accepted from holdco's own pages (issue: Chromium posts them with
// Origin: null under no-referrer), their posts from a sandboxed tenant
// page are refused, and an attacker's /auth/callback and /oidc/callback
// URLs opened from a tenant page sign nobody in (login CSRF).
func TestOwnPagesInChromium(t *testing.T) {
	t.Parallel()
	testenv.SQLiteOnly(t, "holdco's own pages in a browser; the REST and OAuth paths behind them run on Postgres in api's, oauth's and app's other tests")
	testenv.NodeScripts(t, "pages")
	bin := testenv.Chromium(t)
	a := startOAuth(t)
	ctx := context.Background()
	apiURL := "http://" + a.APIAddr()
	issuer := a.Service.OAuth.Issuer()

	// Two device logins: one the user approves, one the tenant page tries.
	var mine, theirs map[string]any
	postJSON(t, apiURL+"/auth/cli/device/start", "", "", http.StatusOK, &mine)
	postJSON(t, apiURL+"/auth/cli/device/start", "", "", http.StatusOK, &theirs)

	// Two local domain checkouts of a company.
	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "dom@example.com", NormalizedEmail: "dom@example.com", Name: "Dom"}, "Dom")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialPersonal, CredentialID: "t", UserID: user.ID, ConglomerateID: cong.ID})
	co, err := a.Service.Companies.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Page Tea"})
	require.NoError(t, err)
	found, err := a.Service.Growth.Search(as, co.ID, "pagetea")
	require.NoError(t, err)
	var tokens []string
	for _, r := range found {
		if r.Available && !r.Premium && len(tokens) < 2 {
			c, err := a.Service.Growth.CreateCheckout(as, co.ID, growth.CheckoutInput{Domain: r.Domain})
			require.NoError(t, err)
			u, err := url.Parse(c.URL)
			require.NoError(t, err)
			require.Equal(t, growth.LocalCheckoutPath, u.Path)
			tokens = append(tokens, u.Query().Get("t"))
		}
	}
	require.Len(t, tokens, 2, "two available domains")

	// The attacker signs in as themselves on both origins and stops at
	// the callback, keeping its URL.
	jar, _ := cookiejar.New(nil)
	attacker := &http.Client{Jar: jar, CheckRedirect: noFollow.CheckRedirect}
	apiCallback, err := devoidc.SignIn(ctx, location(t, attacker, apiURL+"/auth/login?redirect_url=%2F").String(), "mallory@example.com", "correct horse")
	require.NoError(t, err)
	require.Equal(t, "/auth/callback", apiCallback.Path)
	var reg map[string]any
	postJSON(t, issuer+"/oidc/register", "", `{"client_name":"Mallory's assistant","redirect_uris":["http://127.0.0.1:9/cb"],"application_type":"native"}`, http.StatusCreated, &reg)
	authorize := issuer + "/oidc/authorize?" + url.Values{"client_id": {reg["client_id"].(string)}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"response_type": {"code"}, "scope": {"nanocorp"}, "state": {"s"}, "code_challenge": {service.PKCEChallenge(strings.Repeat("v", 43))},
		"code_challenge_method": {"S256"}, "resource": {a.Service.OAuth.Resource()}}.Encode()
	oidcCallback, err := devoidc.SignIn(ctx, location(t, attacker, authorize).String(), "mallory@example.com", "correct horse")
	require.NoError(t, err)
	require.Equal(t, "/oidc/callback", oidcCallback.Path)

	// The tenant page, sandboxed as the sites listener serves every page.
	var page bytes.Buffer
	require.NoError(t, tenantPage.Execute(&page, map[string]string{"API": apiURL, "APICallback": apiCallback.String(), "OIDCCallback": oidcCallback.String(),
		"UserCode": theirs["user_code"].(string), "CheckoutToken": tokens[1]}))
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range statichost.SiteHeaders {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page.Bytes())
	}))
	t.Cleanup(tenant.Close)

	out := []byte(node(t, "pages", []string{"API=" + apiURL, "TENANT=" + tenant.URL + "/", "CHROMIUM=" + bin,
		"DEVICE_URL=" + mine["verification_uri_complete"].(string), "CHECKOUT_URL=" + apiURL + growth.LocalCheckoutPath + "?t=" + url.QueryEscape(tokens[0])}, "pages.mjs"))
	var res struct {
		APICallbackLanding  string   `json:"api_callback_landing"`
		APICallbackText     string   `json:"api_callback_text"`
		APICallbackCookies  []string `json:"api_callback_cookies"`
		OIDCCallbackStatus  int      `json:"oidc_callback_status"`
		OIDCCallbackText    string   `json:"oidc_callback_text"`
		OIDCCallbackCookies []string `json:"oidc_callback_cookies"`
		DevicePageURL       string   `json:"device_page_url"`
		DeviceStatus        int      `json:"device_status"`
		DeviceText          string   `json:"device_text"`
		SignedInCookies     []string `json:"signed_in_cookies"`
		CheckoutStatus      int      `json:"checkout_status"`
		CheckoutText        string   `json:"checkout_text"`
		TenantDeviceStatus  int      `json:"tenant_device_status"`
		TenantDeviceText    string   `json:"tenant_device_text"`
		TenantCheckoutStat  int      `json:"tenant_checkout_status"`
		TenantCheckoutText  string   `json:"tenant_checkout_text"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)

	// Login CSRF: neither callback signed the victim in.
	assert.Contains(t, res.APICallbackLanding, "error=other_browser")
	assert.Contains(t, res.APICallbackText, "started in another browser")
	assert.NotContains(t, res.APICallbackCookies, "holdco_sso", "not signed in to holdco's pages as the attacker")
	assert.Equal(t, http.StatusBadRequest, res.OIDCCallbackStatus)
	assert.Contains(t, res.OIDCCallbackText, "not started in this browser")
	for _, c := range res.OIDCCallbackCookies {
		assert.NotContains(t, c, "oauth_session", "not signed in to the authorization server as the attacker")
	}

	// The device approval, from holdco's page.
	assert.NotContains(t, res.DevicePageURL, "login_code", "no live login code left in the approval page's address")
	assert.Equal(t, http.StatusOK, res.DeviceStatus, res.DeviceText)
	assert.Contains(t, res.DeviceText, "Approved")
	assert.Contains(t, res.SignedInCookies, "holdco_sso", "the real sign-in (with its binding cookie) worked")
	var poll map[string]any
	postJSON(t, apiURL+"/auth/cli/device/token", "", `{"device_code":"`+mine["device_code"].(string)+`"}`, http.StatusOK, &poll)
	require.Equal(t, "complete", poll["status"])
	assert.Equal(t, "pw-bea@example.com", poll["user"].(map[string]any)["email"])

	// The local checkout, from holdco's page.
	assert.Equal(t, http.StatusOK, res.CheckoutStatus, res.CheckoutText)
	assert.Contains(t, res.CheckoutText, "Paid.")
	paid, err := a.Service.Growth.ReadLocalCheckout(ctx, tokens[0])
	require.NoError(t, err)
	assert.NotEqual(t, models.DomainAwaitingPayment, paid.Purchase.State)

	// The same forms from the tenant page: refused, nothing changed.
	assert.Equal(t, http.StatusForbidden, res.TenantDeviceStatus, res.TenantDeviceText)
	assert.Contains(t, res.TenantDeviceText, "not sent from holdco's page")
	postJSON(t, apiURL+"/auth/cli/device/token", "", `{"device_code":"`+theirs["device_code"].(string)+`"}`, http.StatusOK, &poll)
	assert.Equal(t, "authorization_pending", poll["status"])
	assert.Equal(t, http.StatusForbidden, res.TenantCheckoutStat, res.TenantCheckoutText)
	assert.Contains(t, res.TenantCheckoutText, "not sent from holdco's page")
	unpaid, err := a.Service.Growth.ReadLocalCheckout(ctx, tokens[1])
	require.NoError(t, err)
	assert.Equal(t, models.DomainAwaitingPayment, unpaid.Purchase.State)
}
