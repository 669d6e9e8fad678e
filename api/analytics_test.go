package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/analytics"
	"holdco/service/usecases"
)

func (w *world) analyticsKey() string {
	w.t.Helper()
	var key struct{ Key string }
	sc, err := w.store.SystemCompanyScope(context.Background(), w.adaCo)
	require.NoError(w.t, err)
	key.Key, err = w.store.Analytics().AnalyticsKey(context.Background(), sc)
	require.NoError(w.t, err)
	return key.Key
}

func (w *world) post(path, contentType string, body io.Reader, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

func TestCaptureEndpoints(t *testing.T) {
	w := newWorld(t)
	key := w.analyticsKey()
	ev := func(id, path string) map[string]any {
		return map[string]any{"event": "$pageview", "distinct_id": id, "properties": map[string]any{"token": key, "$current_url": "https://ada.example" + path}}
	}
	batch, _ := json.Marshal([]any{ev("a", "/"), ev("b", "/x")})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(batch)
	require.NoError(t, zw.Close())
	single, _ := json.Marshal(map[string]any{"api_key": key, "event": "$pageview", "distinct_id": "c", "properties": map[string]any{}})
	wrapped, _ := json.Marshal(map[string]any{"api_key": key, "batch": []any{ev("d", "/")}})

	origin := http.Header{"Origin": {"https://ada.example"}}
	for _, c := range []struct {
		name, path, ctype string
		body              []byte
	}{
		{"json event", "/analytics/e/", "application/json", single},
		{"json array", "/analytics/e/?ip=1&ver=1.0", "text/plain", batch},
		{"gzip-js", "/analytics/e/?compression=gzip-js", "text/plain", gz.Bytes()},
		{"base64 form", "/analytics/e/", "application/x-www-form-urlencoded", []byte("data=" + url.QueryEscape(base64.StdEncoding.EncodeToString(batch)))},
		{"batch", "/analytics/batch/", "application/json", wrapped},
		{"unknown key", "/analytics/e/", "application/json", []byte(`{"api_key":"hca_unknown0000000000000000","event":"$pageview","distinct_id":"x"}`)},
		{"malformed json", "/analytics/batch/", "application/json", []byte(`{"batch":[`)},
		{"empty body", "/analytics/e/", "", nil},
		{"bad gzip", "/analytics/e/?compression=gzip-js", "text/plain", []byte("not gzip")},
	} {
		rec := w.post(c.path, c.ctype, bytes.NewReader(c.body), origin)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", c.name, rec.Body.String())
		assert.JSONEq(t, `{"status":1}`, rec.Body.String(), c.name)
		assert.Equal(t, "https://ada.example", rec.Header().Get("Access-Control-Allow-Origin"), c.name)
		assert.Len(t, rec.Header().Get("X-Request-Id"), 24, "%s: a minted request id", c.name)
	}
	// POST is served ahead of gin; other methods still get the router's answers.
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/analytics/e/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Contains(t, rec.Body.String(), `"method_not_allowed"`)
	w.svc.Analytics.Flush(context.Background())
	st := w.svc.Analytics.Stats()
	assert.Equal(t, int64(8), st.Stored)
	assert.Equal(t, int64(1), st.UnknownKey)
	assert.Equal(t, int64(3), st.Malformed)

	pre := httptest.NewRequest(http.MethodOptions, "/analytics/e/", nil)
	pre.Header.Set("Origin", "https://ada.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type")
	rec = httptest.NewRecorder()
	w.handler.ServeHTTP(rec, pre)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Equal(t, "https://ada.example", rec.Header().Get("Access-Control-Allow-Origin"))
	assert.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), "POST")
	assert.Equal(t, "content-type", rec.Header().Get("Access-Control-Allow-Headers"))

	var sum map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/analytics/summary?range=1d", userA, "", http.StatusOK, &sum)
	assert.Equal(t, float64(8), sum["pageviews"].(map[string]any)["value"])
	assert.Equal(t, "hour", sum["trend"].(map[string]any)["step"])

	// Over 1 MB: 413, with or without a Content-Length.
	big := bytes.Repeat([]byte("x"), analytics.MaxBodyBytes+1)
	rec = w.post("/analytics/e/", "application/json", bytes.NewReader(big), nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	chunked := httptest.NewRequest(http.MethodPost, "/analytics/batch/", io.MultiReader(bytes.NewReader(big)))
	chunked.ContentLength = -1
	rec = httptest.NewRecorder()
	w.handler.ServeHTTP(rec, chunked)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Contains(t, rec.Body.String(), `"too_large"`)

	// More events than a request may carry: 413 with the numbers.
	many := `{"api_key":"` + key + `","batch":[` + strings.Repeat(`{"event":"$pageview","distinct_id":"m"},`, analytics.MaxBatchEvents) +
		`{"event":"$pageview","distinct_id":"m"}]}`
	rec = w.post("/analytics/batch/", "application/json", strings.NewReader(many), nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Contains(t, rec.Body.String(), "at most 1000 events, this one 1001")
}

func TestCaptureQueueFullAnswers503(t *testing.T) {
	w := newWorldWith(t, usecases.Options{Analytics: analytics.Options{QueueEvents: 1}})
	key := w.analyticsKey()
	body := `{"api_key":"` + key + `","event":"$pageview","distinct_id":"q"}`
	two := `[` + body + `,` + body + `]`
	assert.Equal(t, http.StatusOK, w.post("/analytics/e/", "application/json", strings.NewReader(body), nil).Code)
	rec := w.post("/analytics/e/", "application/json", strings.NewReader(two), nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "2 events do not fit in a queue of 1")
	assert.Equal(t, "1", rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), `"upstream_unavailable"`)
	assert.Equal(t, http.StatusOK, w.post("/analytics/e/", "application/json", strings.NewReader(body), nil).Code)
	assert.Equal(t, int64(2), w.svc.Analytics.Stats().Stored, "stored before each 200")
}

// One address flooding another company's public key is cut off with 429
// and Retry-After; other addresses are not.
func TestCaptureFloodAnswers429(t *testing.T) {
	// A burst of 20 events; the clock stands still, so a loaded machine
	// refills nothing between the requests.
	stopped := time.Now().UTC()
	w := newWorldWith(t, usecases.Options{Clock: func() time.Time { return stopped }, Analytics: analytics.Options{AddressRate: 2, KeyRate: 1000}})
	key := w.analyticsKey()
	batch := func(n int) string {
		evs := make([]string, n)
		for i := range evs {
			evs[i] = `{"event":"$pageview","distinct_id":"f` + strconv.Itoa(i) + `"}`
		}
		return `{"api_key":"` + key + `","batch":[` + strings.Join(evs, ",") + `]}`
	}
	from := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/analytics/batch/", strings.NewReader(batch(10)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://elsewhere.example")
		req.RemoteAddr = addr + ":4242"
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		return rec
	}
	codes := map[int]int{}
	var limited *httptest.ResponseRecorder
	for range 50 {
		rec := from("203.0.113.9")
		codes[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && limited == nil {
			limited = rec
		}
	}
	assert.Equal(t, map[int]int{http.StatusOK: 2, http.StatusTooManyRequests: 48}, codes, "20 events, then 429")
	require.NotNil(t, limited)
	retry, err := strconv.Atoi(limited.Header().Get("Retry-After"))
	require.NoError(t, err, "Retry-After: %q", limited.Header().Get("Retry-After"))
	assert.GreaterOrEqual(t, retry, 1)
	assert.Contains(t, limited.Body.String(), `"rate_limited"`)
	assert.Equal(t, "https://elsewhere.example", limited.Header().Get("Access-Control-Allow-Origin"), "the browser can read the 429")
	assert.Equal(t, http.StatusOK, from("198.51.100.7").Code, "another address is not limited")
	assert.Equal(t, int64(30), w.svc.Analytics.Stats().Stored)
}

// posthog-js asks api_host for its remote config and feature flags:
// answered empty, with CORS, instead of 404s the console reports as CORS
// errors.
func TestPostHogConfigAndFlagsAnswerEmptyWithCORS(t *testing.T) {
	w := newWorld(t)
	key := w.analyticsKey()
	origin := http.Header{"Origin": {"https://shop.example"}}
	get := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Origin", "https://shop.example")
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		return rec
	}
	rec := get("/analytics/array/" + key + "/config")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "https://shop.example", rec.Header().Get("Access-Control-Allow-Origin"))
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &cfg))
	assert.Equal(t, false, cfg["hasFeatureFlags"])

	rec = get("/analytics/array/" + key + "/config.js")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), `_POSTHOG_REMOTE_CONFIG["`+key+`"]`)
	assert.Equal(t, "https://shop.example", rec.Header().Get("Access-Control-Allow-Origin"))
	rec = get("/analytics/array/%22%3Balert(1)/config.js")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.NotContains(t, rec.Body.String(), "alert", "a key that is not one is not echoed")

	for _, path := range []string{"/analytics/flags/?v=2&config=true", "/analytics/decide/?v=4"} {
		rec := w.post(path, "application/json", strings.NewReader(`{"token":"`+key+`","distinct_id":"x"}`), origin)
		require.Equal(t, http.StatusOK, rec.Code, path)
		assert.Equal(t, "https://shop.example", rec.Header().Get("Access-Control-Allow-Origin"), path)
		var flags map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &flags), path)
		assert.Equal(t, map[string]any{}, flags["flags"], path)
		assert.Equal(t, map[string]any{}, flags["featureFlags"], path)

		pre := httptest.NewRequest(http.MethodOptions, path, nil)
		pre.Header.Set("Origin", "https://shop.example")
		pre.Header.Set("Access-Control-Request-Method", "POST")
		pre.Header.Set("Access-Control-Request-Headers", "content-type")
		prec := httptest.NewRecorder()
		w.handler.ServeHTTP(prec, pre)
		assert.Equal(t, http.StatusNoContent, prec.Code, path)
		assert.Equal(t, "https://shop.example", prec.Header().Get("Access-Control-Allow-Origin"), path)
	}
}

// A visitor whose address has no country is reported with country null.
func TestAnalyticsUnknownCountryIsNull(t *testing.T) {
	w := newWorld(t)
	key := w.analyticsKey()
	rec := w.post("/analytics/e/", "application/json", strings.NewReader(`{"api_key":"`+key+`","event":"$pageview","distinct_id":"lan"}`), nil)
	require.Equal(t, http.StatusOK, rec.Code) // httptest's client is 192.0.2.1: no country
	w.svc.Analytics.Flush(context.Background())
	var out struct {
		Countries []map[string]any `json:"countries"`
	}
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/analytics/countries?range=1d", userA, "", http.StatusOK, &out)
	require.Len(t, out.Countries, 1)
	assert.Contains(t, out.Countries[0], "country")
	assert.Nil(t, out.Countries[0]["country"], "null, not ZZ")
}

func TestLoaderEndpoints(t *testing.T) {
	w := newWorld(t)
	key := w.analyticsKey()
	rec := w.do(http.MethodGet, "/analytics/v1.js?c="+key, "", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Cache-Control"), "max-age=")
	etag := rec.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Contains(t, rec.Body.String(), key)

	again := w.doWith(http.MethodGet, "/analytics/v1.js?c="+key, "", "", http.Header{"If-None-Match": {etag}})
	assert.Equal(t, http.StatusNotModified, again.Code)
	assert.Empty(t, again.Body.String())

	var co map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo, userA, "", http.StatusOK, &co)
	snippet := w.do(http.MethodGet, "/beacon/snippet.js?s="+co["handle"].(string), "", "")
	require.Equal(t, http.StatusOK, snippet.Code)
	assert.Equal(t, rec.Body.String(), snippet.Body.String())

	unknown := w.do(http.MethodGet, "/analytics/v1.js?c=hca_doesnotexist000000000000", "", "")
	require.Equal(t, http.StatusOK, unknown.Code, "no enumeration of keys")
	assert.Contains(t, unknown.Body.String(), `var key = ""`)

	for _, p := range []string{"/analytics/v1.js?c=short", "/analytics/v1.js?c=" + strings.Repeat("k", 65), "/beacon/snippet.js?s=" + strings.Repeat("h", 65), "/beacon/snippet.js?s="} {
		rec := w.do(http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, p)
		assert.Contains(t, rec.Body.String(), `"detail"`, p)
	}
	bad := w.do(http.MethodGet, "/companies/"+w.adaCo+"/analytics/summary?range=365d", userA, "")
	assert.Equal(t, http.StatusBadRequest, bad.Code)
	assert.Contains(t, bad.Body.String(), "range must be one of 1d, 7d, 30d or 90d")
}
