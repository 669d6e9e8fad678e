package oauth

import (
	"math"
	"net/http"
	"strconv"
	"time"

	authz "holdco/service/oauth"
)

// Limits are the endpoints' rate limits, counted once for the cluster
// (service/oauth).
type Limits = authz.Limits

// Rate is a refill rate and a burst.
type Rate = authz.Rate

// DefaultLimits are the limits unless Deps overrides them.
var DefaultLimits = authz.DefaultLimits

// admit takes one request of key from the limit's shared bucket; when it
// is empty (or the count failed) it answers and returns false: a 429 with
// Retry-After, as JSON on the API endpoints or as a page on the browser's.
func (s *server) admit(w http.ResponseWriter, r *http.Request, name string, rate Rate, key string, page bool) bool {
	wait, err := s.svc.Throttle(r.Context(), name, rate, key)
	if err != nil {
		if page {
			s.authorizeFailed(w, r, err)
		} else {
			s.oauthFailed(w, r, err)
		}
		return false
	}
	if wait == 0 {
		return true
	}
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	if page {
		renderMessage(w, http.StatusTooManyRequests, messageData{Title: "Too many requests",
			Message: "Too many sign-in attempts came from here; wait " + retryIn(wait) + " and try again from the assistant."})
		return false
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": authz.ErrTemporarilyUnavailable,
		"error_description": "Too many requests; retry in " + retryIn(wait) + "."})
	return false
}

func retryIn(d time.Duration) string {
	if d <= time.Minute {
		return "a minute"
	}
	return strconv.Itoa(int(math.Ceil(d.Minutes()))) + " minutes"
}
