package analytics

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phuslu/iploc"

	"holdco/models"
	"holdco/service"
)

// MaxBodyBytes is the largest capture body accepted as sent (413 above);
// MaxDecodedBytes bounds it once decompressed. MaxBatchEvents is the most
// events one request carries (413 above; PostHog's clients send batches
// of 50 to 100): a request costs at most one burst of the rate limits, so
// without it one body of 60,000 small events (165 KB gzipped) passed a
// full bucket and each of its unknown keys was looked up.
const (
	MaxBodyBytes    = 1 << 20
	MaxDecodedBytes = 8 << 20
	MaxBatchEvents  = 1_000
)

// Time window of an event's own timestamp: older events are dropped as
// malformed, later ones are taken as now.
const maxEventAge = 7 * 24 * time.Hour

// CaptureInput is one capture request as PostHog clients send it.
type CaptureInput struct {
	Body            []byte
	ContentType     string
	ContentEncoding string
	// Compression is the `compression` query parameter (gzip-js, base64;
	// lz64 is not supported and its events are counted malformed).
	Compression string
	// ClientIP is the client's address, used for the country and never
	// stored; invalid when unknown.
	ClientIP netip.Addr
	// DoNotTrack is the browser's Do-Not-Track or Global Privacy Control
	// signal: nothing is stored.
	DoNotTrack bool
}

// CaptureResult says how many events were stored.
type CaptureResult struct{ Accepted int }

// Capture reads a PostHog capture body (one event, an array of events, or
// {api_key, batch}; JSON, gzip, or base64 in a `data` form field), drops
// events with unknown keys or malformed fields (counted, not an error for
// the sender) and stores the rest, all or none: it returns once they are
// committed (group commit, writer.go), so a nil error means stored.
// It answers rate_limited (with retry_after_seconds) past the client
// address's or the key's rate (counted once for the cluster, limit.go),
// ErrQueueFull when the writer is behind,
// ErrStopped after shutdown, an error wrapping models.ErrUnavailable while
// the database cannot store events, too_large for a body that inflates
// beyond MaxDecodedBytes or carries more than MaxBatchEvents events.
func (s *Service) Capture(ctx context.Context, in CaptureInput) (CaptureResult, error) {
	now := s.now().UTC()
	addr := ""
	if in.ClientIP.IsValid() && s.byAddress != nil { // the address guard is on
		addr = addressKey(in.ClientIP)
		// The cheap first line: an address out of events is refused
		// before its body is decoded.
		if out, wait := s.byAddress.empty(addr, now); out {
			s.counter.RateLimited.Add(1)
			return CaptureResult{}, rateLimited("this address", wait)
		}
	}
	raw, err := decodeBody(in)
	if err != nil {
		if models.IsCode(err, models.CodeTooLarge) {
			return CaptureResult{}, err
		}
		s.counter.Malformed.Add(1)
		return CaptureResult{}, nil
	}
	var one [1]wireEvent
	wires, top, n := splitEventsInto(one[:0], raw)
	if n > MaxBatchEvents {
		return CaptureResult{}, models.Errorf(models.CodeTooLarge, "A capture request carries at most %d events, this one %d; send them in smaller batches.", MaxBatchEvents, n)
	}
	if addr != "" {
		ok, wait, err := s.byAddress.take(ctx, addr, n, now)
		if err != nil {
			return CaptureResult{}, err
		}
		if !ok {
			s.counter.RateLimited.Add(int64(n))
			return CaptureResult{}, rateLimited("this address", wait)
		}
	}
	s.counter.Malformed.Add(int64(n - len(wires)))
	if in.DoNotTrack || len(wires) == 0 {
		return CaptureResult{}, nil
	}
	country := ""
	if in.ClientIP.IsValid() {
		country = iploc.IPCountry(in.ClientIP.Unmap())
		if country == unknownCountry {
			country = ""
		}
	}
	var oneEvent [1]models.AnalyticsEvent // a lone page view's row stays on the stack
	events := oneEvent[:0]
	if len(wires) > 1 {
		events = make([]models.AnalyticsEvent, 0, len(wires))
	}
	perCompany := map[string]int{}
	for _, w := range wires {
		key := firstNonEmpty(w.APIKey, w.Token, w.Properties.Token, top.APIKey, top.Token)
		companyID, err := s.companyOf(ctx, key)
		if err != nil {
			return CaptureResult{}, err
		}
		if companyID == "" {
			s.counter.UnknownKey.Add(1)
			continue
		}
		e, ok := w.event(now, top.SentAt)
		if !ok {
			s.counter.Malformed.Add(1)
			continue
		}
		e.CompanyID, e.Country = companyID, country
		events = append(events, e)
		perCompany[companyID]++
	}
	if len(events) == 0 {
		return CaptureResult{}, nil
	}
	for companyID, k := range perCompany {
		ok, wait, err := s.byKey.take(ctx, companyID, k, now)
		if err != nil {
			return CaptureResult{}, err
		}
		if !ok {
			s.counter.RateLimited.Add(int64(len(events)))
			return CaptureResult{}, rateLimited("this site", wait)
		}
	}
	if err := s.enqueue(ctx, events); err != nil {
		if errors.Is(err, ErrQueueFull) {
			s.counter.QueueFull.Add(int64(len(events)))
		}
		return CaptureResult{}, err
	}
	s.counter.Accepted.Add(int64(len(events)))
	return CaptureResult{Accepted: len(events)}, nil
}

// unknownCountry is what the address database answers for an address it
// has no country for (private, reserved, unassigned); stored as "" and
// reported as null.
const unknownCountry = "ZZ"

// companyOf resolves a public key to its company ("" when unknown), from
// the cache when it can.
func (s *Service) companyOf(ctx context.Context, key string) (string, error) {
	if !ValidKey(key) {
		return "", nil
	}
	if id, ok := s.keys.Get(key); ok {
		return id, nil
	}
	id, err := s.store.Analytics().AnalyticsCompanyByKey(ctx, key)
	switch {
	case errors.Is(err, models.ErrNotFound):
		id = ""
	case err != nil:
		return "", err
	}
	s.keys.Set(key, id)
	return id, nil
}

// ValidKey reports whether k has the shape of a public key: 8 to 64
// letters, digits, '_' or '-'.
func ValidKey(k string) bool {
	if len(k) < models.AnalyticsKeyMinLen || len(k) > models.AnalyticsKeyMaxLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

var errMalformed = errors.New("malformed capture body")

// decodeBody undoes the encodings PostHog clients use: gzip (the
// gzip-js compression, Content-Encoding or the gzip magic), a form with
// a base64 `data` field, or a base64 body.
func decodeBody(in CaptureInput) ([]byte, error) {
	body := in.Body
	compression := strings.ToLower(in.Compression)
	if strings.HasPrefix(strings.ToLower(in.ContentType), "application/x-www-form-urlencoded") || bytes.HasPrefix(body, []byte("data=")) {
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("data") == "" {
			return nil, errMalformed
		}
		if c := form.Get("compression"); c != "" {
			compression = strings.ToLower(c)
		}
		body = []byte(form.Get("data"))
		if compression == "" || compression == "base64" {
			if body, err = decodeBase64(body); err != nil {
				return nil, errMalformed
			}
		}
	} else if compression == "base64" {
		var err error
		if body, err = decodeBase64(bytes.TrimSpace(body)); err != nil {
			return nil, errMalformed
		}
	}
	if compression == "lz64" {
		return nil, errMalformed
	}
	if compression == "gzip-js" || compression == "gzip" || strings.EqualFold(in.ContentEncoding, "gzip") || bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, errMalformed
		}
		out, err := io.ReadAll(io.LimitReader(zr, MaxDecodedBytes+1))
		if err != nil {
			return nil, errMalformed
		}
		if len(out) > MaxDecodedBytes {
			return nil, models.Errorf(models.CodeTooLarge, "The capture body inflates beyond %d MB.", MaxDecodedBytes>>20)
		}
		body = out
	}
	return body, nil
}

func decodeBase64(b []byte) ([]byte, error) {
	s := strings.TrimRight(string(b), "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if out, err := enc.DecodeString(s); err == nil {
			return out, nil
		}
	}
	return nil, errMalformed
}

// event checks w and turns it into a row (without company and country).
func (w wireEvent) event(now time.Time, sentAt string) (models.AnalyticsEvent, bool) {
	id := w.DistinctID
	if id == "" {
		id = w.Properties.DistinctID
	}
	if !oneLine(w.Event, 200) || !oneLine(id, 200) {
		return models.AnalyticsEvent{}, false
	}
	at, ok := eventTime(w, now, sentAt)
	if !ok {
		return models.AnalyticsEvent{}, false
	}
	p := w.Properties
	e := models.AnalyticsEvent{At: at, DistinctID: id, Event: w.Event, ScreenWidth: p.ScreenWidth, ScreenHeight: p.ScreenHeight}
	page := parsePageURL(p.CurrentURL)
	e.Path = firstNonEmpty(p.Pathname, page.path)
	if e.Path == "" {
		e.Path = "/"
	}
	e.Path = clip(e.Path, 500)
	host := strings.ToLower(firstNonEmpty(page.host, p.Host))
	e.Referrer = referrerHost(p.Referrer, p.ReferringHost, host)
	var q url.Values // parsed only when a utm_* property is missing and the URL has a query
	if page.rawQuery != "" && (p.UTMSource == "" || p.UTMMedium == "" || p.UTMCampaign == "") {
		q, _ = url.ParseQuery(page.rawQuery)
	}
	e.UTMSource = clip(firstNonEmpty(p.UTMSource, q.Get("utm_source")), 200)
	e.UTMMedium = clip(firstNonEmpty(p.UTMMedium, q.Get("utm_medium")), 200)
	e.UTMCampaign = clip(firstNonEmpty(p.UTMCampaign, q.Get("utm_campaign")), 200)
	for _, f := range []*string{&e.Path, &e.Referrer, &e.UTMSource, &e.UTMMedium, &e.UTMCampaign} {
		if service.CheckText(*f, false) != nil {
			*f = ""
		}
	}
	return e, true
}

func oneLine(s string, maxLen int) bool {
	return s != "" && utf8.RuneCountInString(s) <= maxLen && service.CheckText(s, false) == nil
}

// eventTime is when the event happened by the server's clock: the
// client's offset (ms before sending) or its timestamp shifted by the
// clock skew that sent_at shows; never later than now, and not older than
// maxEventAge.
func eventTime(w wireEvent, now time.Time, sentAt string) (time.Time, bool) {
	at := now
	switch {
	case w.HasOffset:
		at = now.Add(-time.Duration(w.Offset * float64(time.Millisecond)))
	case w.Timestamp != "":
		ts, err := time.Parse(time.RFC3339Nano, w.Timestamp)
		if err != nil {
			return at, false
		}
		if sent, err := time.Parse(time.RFC3339Nano, sentAt); err == nil && sentAt != "" {
			ts = ts.Add(now.Sub(sent))
		}
		at = ts.UTC()
	}
	if at.After(now) {
		at = now
	}
	return at, now.Sub(at) <= maxEventAge
}

// dimension is a screen size in pixels: 0 unless within 0–100,000.
func dimension(f float64) int {
	if !(f >= 0 && f <= 100_000) { // NaN too
		return 0
	}
	return int(f)
}

// dimensionText is the screen size a string holds (posthog clients may
// send numbers as text).
func dimensionText(s string) int {
	f, _ := strconv.ParseFloat(s, 64)
	return dimension(f)
}

// referrerHost is the external host that sent the visitor, "" for a
// direct visit, models.ReferrerInternal for the site itself.
func referrerHost(ref, refDomain, pageHost string) string {
	h := ""
	if ref != "" && ref != "$direct" {
		h = parsePageURL(ref).host
	}
	if h == "" && refDomain != "$direct" {
		h = refDomain
	}
	h = strings.TrimPrefix(strings.ToLower(h), "www.")
	switch {
	case h == "":
		return ""
	case h == strings.TrimPrefix(pageHost, "www."):
		return models.ReferrerInternal
	}
	return clip(h, 253)
}

// clip cuts s to at most n bytes on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
