package companies

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"holdco/models"
)

// Error classes shown to tenants instead of a failed resource's raw error,
// which names server paths, hosts and roles. The raw error stays in the
// worker's log and in the operators' admin health.
const (
	ErrorClassTimeout     = "timeout"
	ErrorClassUnavailable = "unavailable"
	ErrorClassProvider    = "provider_error"
)

// errorClass sorts a failed resource's error text into a class.
func errorClass(status models.ResourceStatus, lastError string) string {
	if status != models.ResourceFailed && lastError == "" {
		return ""
	}
	msg := strings.ToLower(lastError)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("deadline exceeded", "timeout", "timed out"):
		return ErrorClassTimeout
	case has("connection refused", "connection reset", "no such host", "network is unreachable", "unavailable",
		"too many connections", "too many clients", "the database system is", "broken pipe", "eof"):
		return ErrorClassUnavailable
	}
	return ErrorClassProvider
}

// tenantView is what a company's owner sees of a resource: a reference
// that means something to them and the error class, never the raw error.
func tenantView(v ResourceView) ResourceView {
	v.Ref = tenantRef(v.Ref)
	v.LastError = ""
	return v
}

// tenantRef turns a stored reference into one a tenant can use: a URL (a
// site, a clone URL) without credentials, query or fragment, or the last
// element of a local path (the repository or database name), never a path
// on the server.
func tenantRef(ref string) string {
	if ref == "" {
		return ""
	}
	if u, err := url.Parse(ref); err == nil && u.Host != "" && len(u.Scheme) > 1 {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		return u.String()
	}
	return path.Base(strings.ReplaceAll(filepath.ToSlash(ref), `\`, "/"))
}
