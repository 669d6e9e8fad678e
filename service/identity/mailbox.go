package identity

import "strings"

// dotInsensitiveDomains ignore dots in the local part: "a.b@gmail.com" and
// "ab@gmail.com" are one mailbox. Other providers treat dots as significant,
// so they are kept.
var dotInsensitiveDomains = map[string]string{
	"gmail.com":      "gmail.com",
	"googlemail.com": "gmail.com",
}

// NormalizeMailbox returns the canonical mailbox of an address: lower-case,
// "+tag" removed from the local part, and for Gmail dots removed and
// googlemail.com folded into gmail.com. It is what blocks a deleted
// account's mailbox from signing up again.
func NormalizeMailbox(email string) string {
	email = strings.ToLower(strings.TrimSpace(email))
	at := strings.LastIndex(email, "@")
	if at <= 0 || at == len(email)-1 {
		return email
	}
	local, domain := email[:at], email[at+1:]
	if i := strings.IndexByte(local, '+'); i > 0 {
		local = local[:i]
	}
	if canonical, ok := dotInsensitiveDomains[domain]; ok {
		local = strings.ReplaceAll(local, ".", "")
		domain = canonical
	}
	return local + "@" + domain
}
