package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service/analytics"
)

// AnalyticsMetric is a figure of the period, the one of the period
// before and the change.
type AnalyticsMetric struct {
	Value    float64  `json:"value"`
	Previous float64  `json:"previous" doc:"The same figure over the period of equal length just before."`
	Change   *float64 `json:"change" doc:"Relative change in percent; null when the previous period's figure is 0."`
}

// AnalyticsPage is a path with its page views.
type AnalyticsPage struct {
	Path      string          `json:"path"`
	Pageviews AnalyticsMetric `json:"pageviews"`
}

// AnalyticsReferrer is a referring host with the page views it brought.
type AnalyticsReferrer struct {
	Referrer  *string         `json:"referrer" doc:"The referring host (without www.); null for direct visits (no referrer)."`
	Pageviews AnalyticsMetric `json:"pageviews"`
}

// AnalyticsPoint is one step of the trend.
type AnalyticsPoint struct {
	Start     time.Time `json:"start" doc:"Start of the hour or day (UTC)."`
	Visitors  int64     `json:"visitors" doc:"Distinct visitors in the hour or day."`
	Pageviews int64     `json:"pageviews"`
}

// AnalyticsTrend is the series of the summary's period.
type AnalyticsTrend struct {
	Step   string           `json:"step" enum:"hour,day" doc:"hour for 1d (24 points), day otherwise (one point per day)."`
	Points []AnalyticsPoint `json:"points"`
}

// AnalyticsSummary is a company's web analytics over a range.
type AnalyticsSummary struct {
	Key                string              `json:"key" doc:"The company's public analytics key: the loader's c, and api_key/token for PostHog clients (api_host <public URL>/analytics)."`
	LoaderURL          string              `json:"loader_url" format:"uri" doc:"The loader script for the site's <script src>."`
	Range              string              `json:"range" enum:"1d,7d,30d,90d"`
	From               string              `json:"from" format:"date" doc:"First UTC day of the period."`
	To                 string              `json:"to" format:"date" doc:"Last UTC day of the period (today)."`
	Visitors           AnalyticsMetric     `json:"visitors" doc:"Distinct visitors (anonymous ids) in the period."`
	Pageviews          AnalyticsMetric     `json:"pageviews"`
	Sessions           AnalyticsMetric     `json:"sessions" doc:"A session ends after 30 minutes without an event, and at midnight UTC."`
	BounceRate         AnalyticsMetric     `json:"bounce_rate" doc:"Percent of sessions with exactly one page view."`
	AvgSessionDuration AnalyticsMetric     `json:"avg_session_duration" doc:"Mean time from a session's first to its last event, in seconds."`
	TopPages           []AnalyticsPage     `json:"top_pages" doc:"Up to 10 paths with the most page views."`
	TopReferrers       []AnalyticsReferrer `json:"top_referrers" doc:"Up to 10 referrers with the most page views (navigation within the site is not a referrer)."`
	Trend              AnalyticsTrend      `json:"trend"`
}

// AnalyticsCountry is a country's visitors and page views.
type AnalyticsCountry struct {
	Country   *string `json:"country" doc:"ISO 3166-1 alpha-2 code; null when the visitor's address has no known country."`
	Visitors  int64   `json:"visitors"`
	Pageviews int64   `json:"pageviews"`
}

// AnalyticsCountries is a company's visitors and page views per country.
type AnalyticsCountries struct {
	Range     string             `json:"range" enum:"1d,7d,30d,90d"`
	From      string             `json:"from" format:"date"`
	To        string             `json:"to" format:"date"`
	Countries []AnalyticsCountry `json:"countries" doc:"Most visitors first; a visitor's day counts in the country of its first event."`
}

type analyticsHandlers struct {
	svc     *analytics.Service
	trusted []netip.Prefix // proxies allowed to name the client in X-Forwarded-For
	logger  *slog.Logger
}

const capturePaths = "/analytics/e/ and /analytics/batch/"

// capturePathList is the capture routes (served ahead of gin for POST,
// direct.go).
var capturePathList = []string{"/analytics/e/", "/analytics/batch/"}

// FrontRoute reports whether the API listener's lean HTTP/1.1 front
// (internal/httpfront) serves a request: what a company site's pages ask
// of the API origin (the loader, capture and its preflight, posthog-js's
// remote config and flags), so a visitor's connection stays on the front. Nothing
// a signed-in user calls is among them. The front calls the listener's
// one handler: the routes, middleware and answers are the same.
func FrontRoute(method, path string) bool {
	switch method {
	case http.MethodPost:
		return slices.Contains(capturePathList, path) || slices.Contains(flagsPathList, path)
	case http.MethodOptions:
		return slices.Contains(capturePathList, path) || slices.Contains(flagsPathList, path) || strings.HasPrefix(path, remoteConfigPrefix)
	case http.MethodGet:
		return path == analytics.LoaderPath || path == snippetPath || strings.HasPrefix(path, remoteConfigPrefix)
	}
	return false
}

// FrontMaxBody is the longest body the front reads itself (capture's);
// a longer one goes to net/http, whose handler answers 413.
const FrontMaxBody = analytics.MaxBodyBytes

// The loader by handle, and posthog-js's remote config and flags.
const (
	snippetPath        = "/beacon/snippet.js"
	remoteConfigPrefix = "/analytics/array/"
)

var flagsPathList = []string{"/analytics/flags/", "/analytics/decide/"}

func registerAnalyticsRoutes(api huma.API, engine *gin.Engine, h *analyticsHandlers) {
	tags := []string{"analytics"}
	huma.Register(api, huma.Operation{OperationID: "get-analytics-summary", Method: http.MethodGet, Path: "/companies/{company_id}/analytics/summary",
		Tags: tags, Summary: "The company's analytics over a range", Security: bearerSecurity,
		Description: "Visitors, page views, sessions, bounce rate and mean session duration, each with the change against the period before; " +
			"top pages and referrers; a trend (hourly for 1d, daily otherwise). Ranges are whole UTC days ending today (1d is today so far). " +
			"A range other than 1d, 7d, 30d or 90d answers 400 `bad_request`. Read from rollups, not raw events.",
		Responses: map[string]*huma.Response{"400": {Description: "range is not one of 1d, 7d, 30d, 90d"}}}, h.summary)
	huma.Register(api, huma.Operation{OperationID: "get-analytics-countries", Method: http.MethodGet, Path: "/companies/{company_id}/analytics/countries",
		Tags: tags, Summary: "The company's visitors and page views per country", Security: bearerSecurity,
		Description: "Countries come from the visitor's address (never stored) through an embedded offline database. Same ranges as the summary.",
		Responses:   map[string]*huma.Response{"400": {Description: "range is not one of 1d, 7d, 30d, 90d"}}}, h.countries)
	huma.Register(api, huma.Operation{OperationID: "get-analytics-loader", Method: http.MethodGet, Path: analytics.LoaderPath,
		Tags: tags, Summary: "A company's analytics loader script",
		Description: "The script a site includes to record page views (referrer, UTM parameters, screen size, a first-party anonymous id) " +
			"to " + capturePaths + "; it records nothing under Do-Not-Track or Global Privacy Control. An unknown key answers a valid script " +
			"that records nothing. Cacheable: ETag (If-None-Match answers 304) and Cache-Control.",
		Responses: loaderResponses()}, h.loader)
	huma.Register(api, huma.Operation{OperationID: "get-beacon-snippet", Method: http.MethodGet, Path: snippetPath,
		Tags: tags, Summary: "The analytics loader of the company with this handle",
		Description: "The same script as /analytics/v1.js for the company whose handle is `s`; an unknown handle answers the script that records nothing.",
		Responses:   loaderResponses()}, h.snippet)

	// Capture is not a huma operation: PostHog clients send gzip, form
	// and base64 bodies huma would refuse, and it must stay cheap per
	// request. The router serves POST ahead of gin (direct.go); the gin
	// routes answer the other methods, and the operations are documented
	// in the OpenAPI document.
	for _, p := range []struct{ id, path, what string }{{"capture-event", capturePathList[0], "one event (or any body /batch/ takes)"},
		{"capture-batch", capturePathList[1], "a batch: {api_key, batch: [events]} or an array of events"}} {
		documentCapture(api.OpenAPI(), tags, p.id, p.path, p.what)
		engine.POST(p.path, h.capture)
		engine.OPTIONS(p.path, h.preflight)
	}
	// posthog-js also asks api_host for its remote config and feature
	// flags; holdco has neither, and answers so (with CORS), so the
	// browser's console stays clean.
	engine.GET(remoteConfigPrefix+":key/:file", h.remoteConfig)
	engine.OPTIONS(remoteConfigPrefix+":key/:file", h.preflight)
	for _, p := range flagsPathList {
		engine.POST(p, h.flags)
		engine.OPTIONS(p, h.preflight)
	}
}

// emptyRemoteConfig is posthog-js's remote config with every feature
// off: no flags, recordings, surveys or site apps.
const emptyRemoteConfig = `{"supportedCompression":["gzip-js"],"hasFeatureFlags":false,"sessionRecording":false,` +
	`"surveys":false,"heatmaps":false,"autocaptureExceptions":false,"captureDeadClicks":false,"siteApps":[],"toolbarParams":{}}`

// remoteConfig answers GET /analytics/array/{key}/config (JSON) and
// /config.js (the script form) with the empty config, for any key.
func (h *analyticsHandlers) remoteConfig(c *gin.Context) {
	w := c.Writer
	allowCORS(w, c.Request)
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(analytics.LoaderMaxAge))
	switch c.Param("file") {
	case "config":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(emptyRemoteConfig))
	case "config.js":
		key := c.Param("key")
		if !analytics.ValidKey(key) {
			key = ""
		}
		token, _ := json.Marshal(key)
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};window._POSTHOG_REMOTE_CONFIG[" +
			string(token) + "]={config:" + emptyRemoteConfig + ",siteApps:[]};})();\n"))
	default:
		writeError(w, models.CodeNotFound, "No route matches GET "+c.Request.URL.Path+".")
	}
}

// flags answers posthog-js's /flags/ (and the older /decide/): no
// feature flags, in both response shapes.
func (h *analyticsHandlers) flags(c *gin.Context) {
	allowCORS(c.Writer, c.Request)
	_, _ = io.Copy(io.Discard, io.LimitReader(c.Request.Body, analytics.MaxBodyBytes))
	c.Writer.Header().Set("Content-Type", "application/json")
	c.Writer.WriteHeader(http.StatusOK)
	_, _ = c.Writer.Write([]byte(`{"flags":{},"featureFlags":{},"featureFlagPayloads":{},"errorsWhileComputingFlags":false,"config":` +
		emptyRemoteConfig + `}`))
}

// loaderResponses document what the loaders serve: JavaScript, not JSON.
func loaderResponses() map[string]*huma.Response {
	return map[string]*huma.Response{
		"200": {Description: "The loader script", Content: map[string]*huma.MediaType{
			"text/javascript": {Schema: &huma.Schema{Type: huma.TypeString}}}},
		"304": {Description: "Not modified (If-None-Match matched the ETag)"},
	}
}

type analyticsRangeInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Range     string `query:"range" doc:"1d, 7d, 30d or 90d (default 30d); anything else answers 400."`
}

type analyticsSummaryOutput struct{ Body AnalyticsSummary }

func metricOf(m analytics.Metric) AnalyticsMetric {
	return AnalyticsMetric{Value: m.Value, Previous: m.Previous, Change: m.Change}
}

func (h *analyticsHandlers) summary(ctx context.Context, in *analyticsRangeInput) (*analyticsSummaryOutput, error) {
	s, err := h.svc.Summary(ctx, in.CompanyID, in.Range)
	if err != nil {
		return nil, err
	}
	out := AnalyticsSummary{Key: s.Key, LoaderURL: s.LoaderURL, Range: s.Range, From: s.From.Format(time.DateOnly), To: s.To.Format(time.DateOnly),
		Visitors: metricOf(s.Visitors), Pageviews: metricOf(s.Pageviews), Sessions: metricOf(s.Sessions), BounceRate: metricOf(s.BounceRate),
		AvgSessionDuration: metricOf(s.AvgSessionSecs), TopPages: make([]AnalyticsPage, len(s.TopPages)),
		TopReferrers: make([]AnalyticsReferrer, len(s.TopReferrers)),
		Trend:        AnalyticsTrend{Step: s.TrendStep, Points: make([]AnalyticsPoint, len(s.Trend))}}
	for i, p := range s.TopPages {
		out.TopPages[i] = AnalyticsPage{Path: p.Name, Pageviews: metricOf(p.Pageviews)}
	}
	for i, r := range s.TopReferrers {
		out.TopReferrers[i] = AnalyticsReferrer{Referrer: nonEmpty(r.Name), Pageviews: metricOf(r.Pageviews)}
	}
	for i, p := range s.Trend {
		out.Trend.Points[i] = AnalyticsPoint{Start: p.Start, Visitors: p.Visitors, Pageviews: p.Pageviews}
	}
	return &analyticsSummaryOutput{Body: out}, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type analyticsCountriesOutput struct{ Body AnalyticsCountries }

func (h *analyticsHandlers) countries(ctx context.Context, in *analyticsRangeInput) (*analyticsCountriesOutput, error) {
	c, err := h.svc.Countries(ctx, in.CompanyID, in.Range)
	if err != nil {
		return nil, err
	}
	out := AnalyticsCountries{Range: c.Range, From: c.From.Format(time.DateOnly), To: c.To.Format(time.DateOnly),
		Countries: make([]AnalyticsCountry, len(c.Countries))}
	for i, x := range c.Countries {
		out.Countries[i] = AnalyticsCountry{Country: nonEmpty(x.Country), Visitors: x.Visitors, Pageviews: x.Pageviews}
	}
	return &analyticsCountriesOutput{Body: out}, nil
}

type loaderInput struct {
	Key         string `query:"c" required:"true" minLength:"8" maxLength:"64" doc:"The company's public analytics key."`
	IfNoneMatch string `header:"If-None-Match"`
}

type snippetInput struct {
	Handle      string `query:"s" required:"true" minLength:"1" maxLength:"64" doc:"The company's handle."`
	IfNoneMatch string `header:"If-None-Match"`
}

type scriptOutput struct {
	Status       int
	ContentType  string `header:"Content-Type"`
	ETag         string `header:"ETag"`
	CacheControl string `header:"Cache-Control"`
	NoSniff      string `header:"X-Content-Type-Options"`
	CORP         string `header:"Cross-Origin-Resource-Policy"`
	Body         []byte
}

func scriptOut(s analytics.Script, ifNoneMatch string, err error) (*scriptOutput, error) {
	if err != nil {
		return nil, err
	}
	out := &scriptOutput{Status: http.StatusOK, ContentType: "text/javascript; charset=utf-8", ETag: s.ETag,
		CacheControl: "public, max-age=" + strconv.Itoa(analytics.LoaderMaxAge), NoSniff: "nosniff", CORP: "cross-origin", Body: s.Body}
	for _, tag := range strings.Split(ifNoneMatch, ",") {
		if t := strings.TrimPrefix(strings.TrimSpace(tag), "W/"); t == s.ETag || t == "*" {
			out.Status, out.Body = http.StatusNotModified, nil
		}
	}
	return out, nil
}

func (h *analyticsHandlers) loader(ctx context.Context, in *loaderInput) (*scriptOutput, error) {
	s, err := h.svc.Loader(ctx, in.Key)
	return scriptOut(s, in.IfNoneMatch, err)
}

func (h *analyticsHandlers) snippet(ctx context.Context, in *snippetInput) (*scriptOutput, error) {
	s, err := h.svc.LoaderByHandle(ctx, in.Handle)
	return scriptOut(s, in.IfNoneMatch, err)
}

// Header values shared by every answer (net/http only reads them): a
// capture request allocates none of them.
var (
	headerAny      = []string{"*"}
	headerTrue     = []string{"true"}
	headerOrigin   = []string{"Origin"}
	headerJSON     = []string{"application/json"}
	captureOKBody  = []byte(`{"status":1}`)
	headerRetryOne = []string{captureRetryAfter}
)

// allowCORS opens the capture paths to every site: the loader and
// PostHog clients post from the companies' own origins.
func allowCORS(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	if o := r.Header.Get("Origin"); o != "" {
		hd.Set("Access-Control-Allow-Origin", o)
		hd["Access-Control-Allow-Credentials"] = headerTrue
		if v := hd["Vary"]; len(v) == 0 {
			hd["Vary"] = headerOrigin
		} else {
			hd.Add("Vary", "Origin")
		}
	} else {
		hd["Access-Control-Allow-Origin"] = headerAny
	}
}

func (h *analyticsHandlers) preflight(c *gin.Context) {
	allowCORS(c.Writer, c.Request)
	hd := c.Writer.Header()
	hd.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	if req := c.GetHeader("Access-Control-Request-Headers"); req != "" {
		hd.Set("Access-Control-Allow-Headers", req)
	} else {
		hd.Set("Access-Control-Allow-Headers", "Content-Type")
	}
	hd.Set("Access-Control-Max-Age", "86400")
	c.Status(http.StatusNoContent)
}

// captureRetryAfter is the Retry-After of a 503 when the queue is full.
const captureRetryAfter = "1"

func (h *analyticsHandlers) capture(c *gin.Context) {
	h.serveCapture(c.Writer, c.Request)
}

// captureBuffers holds capture bodies between requests: a body is read
// into one and dropped once the use case returns (it keeps copies of
// what it stores).
var captureBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooledBody bounds the buffers kept for the next request.
const maxPooledBody = 64 << 10

// readCaptureBody reads the body, at most analytics.MaxBodyBytes: into a
// pooled buffer when its declared length fits one (pooled is that buffer,
// for releaseCaptureBody), else as it comes.
func readCaptureBody(w http.ResponseWriter, r *http.Request) (body []byte, pooled *[]byte, err error) {
	if n := r.ContentLength; n >= 0 && n <= analytics.MaxBodyBytes {
		bp := captureBuffers.Get().(*[]byte)
		if int64(cap(*bp)) >= n {
			buf := (*bp)[:n]
			if _, err := io.ReadFull(r.Body, buf); err != nil {
				releaseCaptureBody(bp)
				return nil, nil, err
			}
			return buf, bp, nil
		}
		releaseCaptureBody(bp)
		// Larger than a pooled buffer: read as it comes, so a client
		// that announces 1 MB and sends nothing holds no more than it
		// sent.
		body, err = io.ReadAll(io.LimitReader(r.Body, n))
		if err == nil && int64(len(body)) < n {
			err = io.ErrUnexpectedEOF
		}
		return body, nil, err
	}
	body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, analytics.MaxBodyBytes))
	return body, nil, err
}

func releaseCaptureBody(bp *[]byte) {
	if bp != nil && cap(*bp) <= maxPooledBody {
		captureBuffers.Put(bp)
	}
}

// serveCapture is POST /analytics/e/ and /analytics/batch/.
func (h *analyticsHandlers) serveCapture(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	// The edge rule of every input (inputs.go) holds here too: this route
	// is not a huma operation, so it checks its query itself.
	compression := ""
	if r.URL.RawQuery != "" {
		query := r.URL.Query()
		for name, vs := range query {
			for _, v := range vs {
				if typ, msg := textFailure(v, ruleSingleLine); typ != "" {
					writeValidation(w, []any{"query", name}, msg, typ)
					return
				}
			}
		}
		compression = query.Get("compression")
	}
	if r.ContentLength > analytics.MaxBodyBytes {
		writeError(w, models.CodeTooLarge, "A capture body may have at most 1 MB.")
		return
	}
	body, pooled, err := readCaptureBody(w, r)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, models.CodeTooLarge, "A capture body may have at most 1 MB.")
			return
		}
		writeError(w, models.CodeBadRequest, "The capture body could not be read.")
		return
	}
	_, err = h.svc.Capture(r.Context(), analytics.CaptureInput{Body: body, ContentType: r.Header.Get("Content-Type"),
		ContentEncoding: r.Header.Get("Content-Encoding"), Compression: compression,
		ClientIP: clientIP(r, h.trusted), DoNotTrack: r.Header.Get("DNT") == "1" || r.Header.Get("Sec-GPC") == "1"})
	releaseCaptureBody(pooled)
	var de *models.Error
	switch {
	case err == nil:
		w.Header()["Content-Type"] = headerJSON
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(captureOKBody)
	case errors.As(err, &de) && de.Code == models.CodeTooLarge:
		writeError(w, models.CodeTooLarge, de.Detail) // inflates too far, or too many events
	case errors.As(err, &de) && de.Code == models.CodeRateLimited:
		if v, ok := de.Extra["retry_after_seconds"].(int64); ok {
			w.Header().Set("Retry-After", strconv.FormatInt(max(v, 1), 10))
		}
		writeBody(w, models.BodyOf(de), http.StatusTooManyRequests)
	case errors.Is(err, models.ErrUnavailable):
		// The events are not stored: the client keeps them and retries.
		w.Header().Set("Retry-After", strconv.Itoa(outageRetryAfter))
		writeBody(w, unavailable(r.Context(), err), http.StatusServiceUnavailable)
	default:
		// A full queue, a stopping process, a commit that failed or a
		// request gone: nothing was stored, the client keeps its events
		// and retries.
		if !errors.Is(err, analytics.ErrQueueFull) && !errors.Is(err, analytics.ErrStopped) && r.Context().Err() == nil {
			h.logger.WarnContext(r.Context(), "analytics capture failed", "error", err)
		}
		w.Header()["Retry-After"] = headerRetryOne
		writeBody(w, &models.ErrorBody{Status: http.StatusServiceUnavailable, Code: string(models.CodeUpstreamUnavailable),
			Detail: "Capture is busy; retry shortly."}, http.StatusServiceUnavailable)
	}
}

func writeBody(w http.ResponseWriter, body *models.ErrorBody, status int) {
	body.Status = status
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// clientIP is the address of the client: the peer's, or, when the peer is
// a trusted proxy, the nearest address in X-Forwarded-For that is not one.
func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if !isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a hop we cannot read: trust nothing beyond it
		}
		a = a.Unmap()
		if !isTrusted(a) {
			return a
		}
		peer = a
	}
	return peer
}

// documentCapture adds a capture operation to the OpenAPI document (its
// handler is a gin route).
func documentCapture(oapi *huma.OpenAPI, tags []string, id, path, what string) {
	errorRef := &huma.MediaType{Schema: oapi.Components.Schemas.Schema(reflect.TypeFor[models.ErrorBody](), true, "ErrorBody")}
	errResp := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": errorRef}}
	}
	oapi.AddOperation(&huma.Operation{
		OperationID: id, Method: http.MethodPost, Path: path, Tags: tags,
		Summary: "Capture analytics events (PostHog protocol)",
		Description: "Takes " + what + " as PostHog clients send them: JSON with `api_key` or `token` (the company's public key), `event`, " +
			"`distinct_id`, `properties`, `timestamp`; gzip bodies (`compression=gzip-js` or Content-Encoding), a form with a base64 `data` field, " +
			"or `compression=base64`. Answers 200 once the events are stored (committed); events with an unknown key or malformed fields are dropped " +
			"and counted, still 200. No event is stored under `DNT: 1` or `Sec-GPC: 1`. CORS is open. The client's address gives the country " +
			"and is not stored.",
		RequestBody: &huma.RequestBody{Content: map[string]*huma.MediaType{
			"application/json":                  {Schema: &huma.Schema{Type: "object"}},
			"text/plain":                        {Schema: &huma.Schema{Type: "string"}},
			"application/x-www-form-urlencoded": {Schema: &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{"data": {Type: "string"}}}},
		}},
		Parameters: []*huma.Param{{Name: "compression", In: "query", Schema: &huma.Schema{Type: "string", Enum: []any{"gzip-js", "base64"}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Stored (or dropped: unknown key, malformed, Do-Not-Track)", Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
				Type: "object", Properties: map[string]*huma.Schema{"status": {Type: "integer"}}}}}},
			"413": errResp("The body is over 1 MB, inflates beyond 8 MB, or carries more than 1,000 events"),
			"429": errResp("Too many events from this client address or for this key; retry after Retry-After seconds"),
			"503": errResp("The events could not be stored (queue full, database unavailable, process stopping); nothing was kept: retry after Retry-After seconds"),
		},
	})
}

// DashboardAnalytics is the company page's analytics headline.
type DashboardAnalytics struct {
	Range      string          `json:"range" enum:"30d"`
	Visitors   AnalyticsMetric `json:"visitors" doc:"Daily visitors summed over the range (a visitor of two days counts twice); the summary counts them once."`
	Pageviews  AnalyticsMetric `json:"pageviews"`
	Sessions   AnalyticsMetric `json:"sessions"`
	BounceRate AnalyticsMetric `json:"bounce_rate" doc:"Percent of sessions with exactly one page view."`
}

func toDashboardAnalytics(h *analytics.Headline) *DashboardAnalytics {
	if h == nil {
		return nil
	}
	return &DashboardAnalytics{Range: h.Range, Visitors: metricOf(h.Visitors), Pageviews: metricOf(h.Pageviews), Sessions: metricOf(h.Sessions),
		BounceRate: metricOf(h.BounceRate)}
}

func writeValidation(w http.ResponseWriter, loc []any, msg, typ string) {
	b, _ := json.Marshal(&HTTPValidationError{Detail: []ValidationError{{Loc: loc, Msg: msg, Type: typ}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	_, _ = w.Write(b)
}
