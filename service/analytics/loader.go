package analytics

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"holdco/models"
)

// CapturePath is where the loader posts its events (PostHog's /e/ under
// /analytics).
const CapturePath = "/analytics/e/"

// LoaderMaxAge is how long browsers and caches may keep a loader script
// (seconds); the ETag revalidates it after that.
const LoaderMaxAge = 3600

// Script is a loader script with its validator.
type Script struct {
	Body []byte
	ETag string // strong, quoted
}

// loaderTemplate records page views (with the referrer, UTM parameters
// and screen size) under a first-party anonymous id kept in the site's
// own storage; it does nothing under Do-Not-Track or Global Privacy
// Control, and nothing for an empty key (an unknown company). Every use of
// storage is guarded: on a page without storage — a holdco-hosted site is
// sandboxed into an opaque origin, where localStorage and document.cookie
// throw — the id lives in memory for the page's life (one visitor per
// page load, the same across its in-page navigations).
const loaderTemplate = `/* holdco analytics v1 */
(function (w, d) {
  var key = __KEY__, endpoint = __ENDPOINT__, n = navigator;
  if (!key || w.__holdcoAnalytics) return;
  w.__holdcoAnalytics = 1;
  if (n.doNotTrack == "1" || w.doNotTrack == "1" || n.msDoNotTrack == "1" || n.globalPrivacyControl === true) return;
  var id, last, name = "_hc_aid";
  try { id = w.localStorage.getItem(name); } catch (e) {}
  try { if (!id) { var m = d.cookie.match(/(?:^|; )_hc_aid=([A-Za-z0-9-]+)/); id = m && m[1]; } } catch (e) {}
  if (!id) { try { id = w.crypto.randomUUID(); } catch (e) {} }
  if (!id) id = Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  try { w.localStorage.setItem(name, id); } catch (e) {}
  try { d.cookie = name + "=" + id + "; path=/; max-age=31536000; SameSite=Lax"; } catch (e) {}
  function send(ev) {
    var l = w.location, q = new URLSearchParams(l.search), s = w.screen || {};
    var p = { $current_url: l.href, $pathname: l.pathname, $host: l.host, $referrer: last || d.referrer || "$direct",
      $screen_width: s.width, $screen_height: s.height, $lib: "holdco-loader" };
    ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"].forEach(function (k) { var v = q.get(k); if (v) p[k] = v; });
    var body = JSON.stringify({ api_key: key, event: ev, distinct_id: id, properties: p });
    try { if (n.sendBeacon && n.sendBeacon(endpoint, body)) return; } catch (e) {}
    try { w.fetch(endpoint, { method: "POST", body: body, keepalive: true, mode: "no-cors" }); } catch (e) {}
  }
  function pageview() { var u = w.location.href; if (u === last) return; send("$pageview"); last = u; }
  var push = w.history && w.history.pushState;
  if (push) {
    w.history.pushState = function () { var r = push.apply(this, arguments); pageview(); return r; };
    w.addEventListener("popstate", pageview);
  }
  if (d.readyState === "loading") d.addEventListener("DOMContentLoaded", pageview); else pageview();
})(window, document);
`

// LoaderPath is the loader script's path; its query parameter c is the
// key.
const LoaderPath = "/analytics/v1.js"

// LoaderURL is where a site loads the company's loader script from.
func (s *Service) LoaderURL(key string) string {
	return strings.TrimRight(s.core.Config().PublicURL, "/") + LoaderPath + "?c=" + key
}

// script renders the loader for key ("" captures nothing).
func (s *Service) script(key string) Script {
	k, _ := json.Marshal(key)
	ep, _ := json.Marshal(strings.TrimRight(s.core.Config().PublicURL, "/") + CapturePath)
	body := strings.NewReplacer("__KEY__", string(k), "__ENDPOINT__", string(ep)).Replace(loaderTemplate)
	sum := sha256.Sum256([]byte(body))
	return Script{Body: []byte(body), ETag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// Loader returns the loader script of the company whose public key is
// key. An unknown key answers a valid script that captures nothing, so
// keys cannot be probed; a key outside 8 to 64 characters is
// invalid_argument on c.
func (s *Service) Loader(ctx context.Context, key string) (Script, error) {
	if n := utf8.RuneCountInString(key); n < models.AnalyticsKeyMinLen || n > models.AnalyticsKeyMaxLen {
		return Script{}, models.Errorf(models.CodeInvalidArgument, "c must be %d to %d characters.", models.AnalyticsKeyMinLen, models.AnalyticsKeyMaxLen).WithField("c")
	}
	id, err := s.companyOf(ctx, key)
	if err != nil {
		return Script{}, err
	}
	if id == "" {
		key = ""
	}
	return s.script(key), nil
}

// LoaderByHandle is the same loader for the company with this handle (the
// beacon snippet's `s`, 1 to 64 characters); an unknown handle answers the
// script that captures nothing.
func (s *Service) LoaderByHandle(ctx context.Context, handle string) (Script, error) {
	if n := utf8.RuneCountInString(handle); n < 1 || n > models.MaxHandleLen {
		return Script{}, models.Errorf(models.CodeInvalidArgument, "s must be 1 to %d characters.", models.MaxHandleLen).WithField("s")
	}
	key := ""
	if models.ValidHandle(handle) {
		if k, ok := s.handleKeys.Get(handle); ok {
			key = k
		} else {
			k, err := s.store.Analytics().AnalyticsKeyByHandle(ctx, handle)
			if err != nil && !errors.Is(err, models.ErrNotFound) {
				return Script{}, err
			}
			s.handleKeys.Set(handle, k)
			key = k
		}
	}
	return s.script(key), nil
}
