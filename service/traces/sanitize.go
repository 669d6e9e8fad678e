package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits of what one event may carry, so that one trace line stays small.
const (
	// MaxStringBytes is the longest string kept whole (in Data, Error);
	// a longer one keeps its first MaxStringBytes bytes and a cut marker.
	MaxStringBytes = 4 << 10
	// MaxArrayItems is the most items an array in Data keeps; a marker
	// item says how many were cut.
	MaxArrayItems = 100
	// MaxLineBytes bounds one stored line: an event still larger after
	// the cuts keeps a preview of its data only.
	MaxLineBytes = 64 << 10
	// maxNameBytes bounds the short fields (tool, call id, model).
	maxNameBytes = 256
)

// Redacted replaces a secret.
const Redacted = "[redacted]"

// secretPatterns find credentials inside free text (a model's answer, a
// tool's input or result, an error message). Each replacement keeps what
// kind of secret it was and drops the secret.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization: Bearer <token>, in any case (12 characters at least,
	// so that "bearer of news" stays).
	{regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/-]{12,}=*`), "${1}${2}" + Redacted},
	// holdco's own credentials: user keys, company keys, admin tokens.
	{regexp.MustCompile(`(svc_[a-z]_v1_)[A-Za-z0-9_-]+`), "${1}" + Redacted},
	// Model provider keys (sk-…, sk-ant-…, sk-proj-…).
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`), "sk-" + Redacted},
	// Payment provider secrets (sk_live_…, rk_test_…, whsec_…).
	{regexp.MustCompile(`\b((?:sk|rk)_(?:live|test)_|whsec_)[A-Za-z0-9]{8,}`), "${1}" + Redacted},
	// JSON Web Tokens (the web sessions).
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`), Redacted},
	// Cloud access key ids.
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Redacted},
	// password=…, "secret": "…", api_key: … (assignments in text, JSON
	// or query strings).
	{regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key)(["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;"'}\]]+)`), "${1}${2}" + Redacted},
	// The password in a URL (postgres://user:secret@host).
	{regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`), "${1}" + Redacted + "@"},
}

// RedactString replaces every credential found in s.
func RedactString(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// secretKeys are object keys whose values are secrets whatever they look
// like (compared lower-case, with dashes as underscores).
var secretKeys = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "secret": true, "token": true,
	"api_key": true, "apikey": true, "access_token": true, "refresh_token": true, "id_token": true,
	"client_secret": true, "authorization": true, "cookie": true, "set_cookie": true,
	"private_key": true, "secret_key": true, "signing_key": true, "session_key": true,
}

func isSecretKey(k string) bool {
	k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
	return secretKeys[k] || strings.HasSuffix(k, "_password") || strings.HasSuffix(k, "_secret") || strings.HasSuffix(k, "_token")
}

// cutString keeps the first max bytes of s (at a character boundary) and
// says how long it was.
func cutString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + fmt.Sprintf("…[cut: %d bytes in all]", len(s))
}

// Sanitize returns the event as it is stored: credentials redacted and
// long strings cut in every string of Data (which is re-encoded as plain
// JSON values), in Error and in the short fields.
func Sanitize(e Event) Event {
	e.Tool = cutString(RedactString(e.Tool), maxNameBytes)
	e.CallID = cutString(RedactString(e.CallID), maxNameBytes)
	e.Model = cutString(RedactString(e.Model), maxNameBytes)
	e.Error = cutString(RedactString(e.Error), MaxStringBytes)
	if e.Data != nil {
		e.Data = sanitizeData(e.Data)
	}
	return e
}

// sanitizeData turns v into plain JSON values (a struct, a map or raw JSON
// alike) and cleans each string.
func sanitizeData(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"unencodable": cutString(RedactString(err.Error()), MaxStringBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep integers exact
	var plain any
	if err := dec.Decode(&plain); err != nil {
		return map[string]any{"unencodable": cutString(RedactString(err.Error()), MaxStringBytes)}
	}
	return cleanValue(plain)
}

func cleanValue(v any) any {
	switch x := v.(type) {
	case string:
		return cutString(RedactString(x), MaxStringBytes)
	case []any:
		cut := 0
		if len(x) > MaxArrayItems {
			cut = len(x) - MaxArrayItems
			x = x[:MaxArrayItems]
		}
		for i := range x {
			x[i] = cleanValue(x[i])
		}
		if cut > 0 {
			x = append(x, fmt.Sprintf("…[cut: %d more items]", cut))
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			key := cutString(RedactString(k), maxNameBytes)
			switch val.(type) {
			case string, map[string]any, []any:
				if isSecretKey(k) {
					out[key] = Redacted
					continue
				}
			}
			out[key] = cleanValue(val)
		}
		return out
	}
	return v // numbers, booleans, null
}

// encodeLine is the stored line of an already sanitized event. An event
// still over MaxLineBytes (many long strings) keeps a preview of its data.
func encodeLine(e Event) ([]byte, error) {
	line, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(line) > MaxLineBytes && e.Data != nil {
		data, _ := json.Marshal(e.Data)
		e.Data = map[string]any{
			"cut":     fmt.Sprintf("the data took %d bytes; its first %d are kept", len(data), MaxStringBytes),
			"preview": cutString(string(data), MaxStringBytes),
		}
		if line, err = json.Marshal(e); err != nil {
			return nil, err
		}
	}
	return append(line, '\n'), nil
}
