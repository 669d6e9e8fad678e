package growth

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"holdco/models"
)

// Domain name limits (RFC 1035): a label is 1 to 63 octets, a name at most
// 253 in its ASCII form.
const (
	MaxQueryChars = 253
	MaxLabelBytes = 63
	MaxNameBytes  = 253
)

// lookup is UTS #46 processing for lookup, with the DNS's letter-digit-
// hyphen rule and length checks (ours run first, for a precise message).
var lookup = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule(), idna.ValidateLabels(true),
	idna.StrictDomainName(true), idna.VerifyDNSLength(true))

// query is a parsed search: a bare name (one label: the suggestion grid)
// or a full domain (an exact check).
type query struct {
	label  string // ASCII label of a bare name
	domain string // ASCII domain of a full name
}

func invalidName(format string, args ...any) *models.Error {
	return models.Errorf(models.CodeInvalidArgument, format, args...).WithField("q")
}

// parseQuery checks q as a domain name: case folded and mapped by IDNA
// (UTS #46), each label 1 to 63 octets in its ASCII (punycode) form, at
// most 253 in all, letters, digits and inner hyphens only.
func parseQuery(q string) (query, *models.Error) {
	if !utf8.ValidString(q) {
		// The IDNA mapping would read each bad byte as U+FFFD and encode
		// it (FuzzParseDomainQuery: "\x82" became xn--zn7c, a name that
		// does not parse back).
		return query{}, invalidName("q is not valid UTF-8.")
	}
	if n := len([]rune(q)); n > MaxQueryChars {
		return query{}, invalidName("q has %d characters; at most %d are allowed.", n, MaxQueryChars)
	}
	q = strings.TrimSuffix(strings.TrimSpace(q), ".")
	if q == "" {
		return query{}, nil
	}
	if strings.ContainsAny(q, " \t/:@?#") {
		return query{}, invalidName("%q is not a domain name: names hold letters, digits and hyphens, with dots between labels.", q)
	}
	for _, l := range strings.Split(q, ".") {
		if l == "" {
			return query{}, invalidName("%q has an empty label (two dots in a row, or a leading dot).", q)
		}
		if strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return query{}, invalidName("The label %q starts or ends with a hyphen.", l)
		}
	}
	ascii, err := lookup.ToASCII(q)
	if err == nil {
		// The mapping turns other full stops (．。｡) and hyphens into
		// ASCII ones: the checks above again, on what they became.
		ascii = strings.TrimSuffix(ascii, ".")
		if ascii == "" {
			return query{}, nil
		}
		for _, l := range strings.Split(ascii, ".") {
			if l == "" {
				return query{}, invalidName("%q has an empty label (two dots in a row, or a leading dot).", q)
			}
			if strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
				return query{}, invalidName("The label %q starts or ends with a hyphen.", l)
			}
		}
	}
	for _, l := range strings.Split(ascii, ".") {
		if len(l) > MaxLabelBytes {
			return query{}, invalidName("The label %q is %d characters long in DNS form; a label holds at most %d.", shorten(l), len(l), MaxLabelBytes)
		}
	}
	if len(ascii) > MaxNameBytes {
		return query{}, invalidName("The name is %d characters long in DNS form; at most %d are allowed.", len(ascii), MaxNameBytes)
	}
	if err != nil {
		return query{}, invalidName("%q is not a valid domain name under the IDNA rules: %s.", q, idnaReason(err))
	}
	if !strings.Contains(ascii, ".") {
		return query{label: ascii}, nil
	}
	tld := ascii[strings.LastIndexByte(ascii, '.')+1:]
	if !strings.HasPrefix(tld, "xn--") && strings.Trim(tld, "abcdefghijklmnopqrstuvwxyz") != "" {
		return query{}, invalidName("The top-level domain %q must be letters only.", tld)
	}
	return query{domain: ascii}, nil
}

// idnaReason is the library's message without its package prefix.
func idnaReason(err error) string {
	return strings.TrimPrefix(err.Error(), "idna: ")
}

func shorten(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// unicodeOf is the display form of an ASCII domain.
func unicodeOf(ascii string) string {
	u, err := idna.Lookup.ToUnicode(ascii)
	if err != nil {
		return ascii
	}
	return u
}
