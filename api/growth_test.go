package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

func (w *world) grantAda(n int64) {
	w.t.Helper()
	_, err := w.svc.Billing.GrantCredits(context.Background(), w.store.SystemConglomerateScope(w.adaCong), models.EntryAdminAdjustment, n, "test")
	require.NoError(w.t, err)
}

func TestAdCapBadInputNamesTheAllowedValues(t *testing.T) {
	w := newWorld(t)
	path := "/companies/" + w.adaCo + "/meta-ads"
	for _, c := range []string{"1", "2", "151"} {
		var body struct {
			Detail []struct {
				Loc  []any  `json:"loc"`
				Msg  string `json:"msg"`
				Type string `json:"type"`
			} `json:"detail"`
		}
		w.call(http.MethodPut, path, userA, `{"daily_cap":`+c+`}`, http.StatusUnprocessableEntity, &body)
		require.Len(t, body.Detail, 1, c)
		assert.Equal(t, []any{"body", "daily_cap"}, body.Detail[0].Loc, c)
		assert.Contains(t, body.Detail[0].Msg, "0 (pauses the ads) or from 3 to 150", c)
	}
	// A cap the balance cannot fund: 402 with the numbers.
	w.grantAda(4)
	var refused map[string]any
	w.call(http.MethodPut, path, userA, `{"daily_cap":5}`, http.StatusPaymentRequired, &refused)
	assert.Equal(t, "insufficient_credits", refused["error"])
	assert.EqualValues(t, 4, refused["balance"])
	assert.EqualValues(t, 5, refused["needed"])
	var panel map[string]any
	w.call(http.MethodPut, path, userA, `{"daily_cap":3}`, http.StatusOK, &panel)
	assert.Equal(t, "PENDING", panel["state"])
	assert.NotNil(t, panel["creative"])
	w.call(http.MethodGet, path, userA, "", http.StatusOK, &panel)
	assert.EqualValues(t, 3, panel["daily_cap"])

	var dash map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/dashboard", userA, "", http.StatusOK, &dash)
	require.NotNil(t, dash["ads"])
	assert.EqualValues(t, 3, dash["ads"].(map[string]any)["daily_cap"])
	assert.Nil(t, dash["domain"])
}

func TestAdPreviewIsSandboxedData(t *testing.T) {
	w := newWorld(t)
	path := "/companies/" + w.adaCo + "/meta-ads"
	w.call(http.MethodGet, path+"/preview", userA, "", http.StatusNotFound, nil)
	w.call(http.MethodPost, path+"/regenerate", userA, "", http.StatusOK, nil)
	rec := w.do(http.MethodGet, path+"/preview?placement=INSTAGRAM_STORY", userA, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Header().Get("Content-Type"), "application/json")
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "sandbox")
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Contains(t, rec.Body.String(), `"placement":"INSTAGRAM_STORY"`)
	var bad struct {
		Detail []struct {
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	w.call(http.MethodGet, path+"/preview?placement=BILLBOARD", userA, "", http.StatusUnprocessableEntity, &bad)
	require.Len(t, bad.Detail, 1)
	assert.Contains(t, bad.Detail[0].Msg, "MOBILE_FEED_STANDARD, DESKTOP_FEED_STANDARD, INSTAGRAM_STANDARD, INSTAGRAM_STORY, RIGHT_COLUMN_STANDARD")
}

// Buying a domain without payments: the checkout URL is holdco's own
// confirmation page, which a same-origin form post completes.
func TestLocalDomainCheckoutPage(t *testing.T) {
	w := newWorld(t)
	var found []map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/domains/search?q=adashop", userA, "", http.StatusOK, &found)
	domain := ""
	for _, f := range found {
		if f["available"] == true && f["premium"] == false {
			domain = f["domain"].(string)
			break
		}
	}
	require.NotEmpty(t, domain)
	var co map[string]any
	w.call(http.MethodPost, "/companies/"+w.adaCo+"/domains/checkout-session", userA, `{"domain":"`+domain+`"}`, http.StatusOK, &co)
	assert.Equal(t, "local", co["provider"])
	u, err := url.Parse(co["checkout_url"].(string))
	require.NoError(t, err)
	page := w.do(http.MethodGet, u.RequestURI(), anon, "")
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), domain)
	assert.Contains(t, page.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")

	form := url.Values{"t": {u.Query().Get("t")}}.Encode()
	cross := postConfirm(w, form, "cross-site")
	assert.Equal(t, http.StatusForbidden, cross.Code, "a cross-site post is refused")
	ok := postConfirm(w, form, "same-origin")
	require.Equal(t, http.StatusOK, ok.Code, ok.Body.String())
	assert.Contains(t, ok.Body.String(), "order_pending")

	var list map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/domains", userA, "", http.StatusOK, &list)
	ds := list["domains"].([]any)
	require.Len(t, ds, 1)
	p := ds[0].(map[string]any)
	assert.Equal(t, "order_pending", p["status"])
	var conflict map[string]any
	w.call(http.MethodPost, "/companies/"+w.adaCo+"/domains/"+p["domain_purchase_id"].(string)+"/attach", userA, "", http.StatusConflict, &conflict)
	assert.Equal(t, "order_pending", conflict["state"])
	w.call(http.MethodPost, "/companies/"+w.bobCo+"/domains/"+p["domain_purchase_id"].(string)+"/attach", userB, "", http.StatusForbidden, nil)
}

func postConfirm(w *world, form, site string) *httptest.ResponseRecorder {
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {site}}
	return w.doWith(http.MethodPost, "/domains/checkout/confirm", anon, form, h)
}
