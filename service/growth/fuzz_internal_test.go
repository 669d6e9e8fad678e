package growth

import (
	"strings"
	"testing"

	"holdco/models"
)

// FuzzParseDomainQuery: a query is refused with invalid_argument at q, or
// parsed into exactly one of a bare label or a domain that is ASCII DNS
// form (letter-digit-hyphen labels of 1 to 63 octets, at most 253 in all,
// no hyphen at either end of a label, a letters-only or punycode TLD),
// which parses again to itself and whose display form parses back to it.
func FuzzParseDomainQuery(f *testing.F) {
	for _, s := range []string{"example", "example.com", "Bücher.de", "xn--bcher-kva.de", "a..b", "-a.com", "a-.com", "ex ample",
		"münchen.", "ＥＸＡＭＰＬＥ．ＣＯＭ", "a.123", "xn--.com", "a.b.c.d.e", "\u200d.com", "ß.de", "٣.com", "a\u0000b",
		strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "com", "xn--55qx5d.xn--fiqs8s", "http://x.com", "ab--cd.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := parseQuery(q)
		if err != nil {
			if err.Code != models.CodeInvalidArgument || err.Field != "q" {
				t.Fatalf("parseQuery(%q): %v", q, err)
			}
			return
		}
		if got.label != "" && got.domain != "" {
			t.Fatalf("parseQuery(%q) = %+v: both a label and a domain", q, got)
		}
		name := got.label + got.domain
		if name == "" {
			if strings.TrimSuffix(strings.TrimSpace(q), ".") != "" {
				t.Fatalf("parseQuery(%q) is empty", q)
			}
			return
		}
		if len(name) > MaxNameBytes {
			t.Fatalf("%q: %d octets", name, len(name))
		}
		labels := strings.Split(name, ".")
		if got.label != "" && len(labels) != 1 || got.domain != "" && len(labels) < 2 {
			t.Fatalf("%+v: wrong kind for %d labels", got, len(labels))
		}
		for _, l := range labels {
			if l == "" || len(l) > MaxLabelBytes || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				t.Fatalf("%q has the label %q", name, l)
			}
		}
		if again, err := parseQuery(name); err != nil || again != got {
			t.Fatalf("%q parses to %+v, %v; not to itself", name, again, err)
		}
		if again, err := parseQuery(unicodeOf(name)); err != nil || again != got {
			t.Fatalf("display form %q of %q parses to %+v, %v", unicodeOf(name), name, again, err)
		}
	})
}

// A query that is not UTF-8 is refused at q (FuzzParseDomainQuery: "\x82"
// parsed to xn--zn7c, the punycode of U+FFFD, which does not parse back).
func TestQueryOfInvalidUTF8IsRefused(t *testing.T) {
	for _, q := range []string{"\x82", "caf\xe9.com", "a.\xff"} {
		got, err := parseQuery(q)
		if err == nil || err.Code != models.CodeInvalidArgument || err.Field != "q" {
			t.Errorf("parseQuery(%q) = %+v, %v; want invalid_argument at q", q, got, err)
		}
	}
}

// The IDNA mapping makes ASCII full stops and hyphens of other ones, so
// the label rules hold for what they became (FuzzParseDomainQuery:
// "ＭＰＬＥ．" parsed to the domain "mple.", with an empty label).
func TestMappedDotsAndHyphensFollowTheLabelRules(t *testing.T) {
	for q, want := range map[string]query{
		"ＭＰＬＥ．":        {label: "mple"},
		"example。com":  {domain: "example.com"},
		"example｡com．": {domain: "example.com"},
		"ＥＸＡＭＰＬＥ．ＣＯＭ．": {domain: "example.com"},
	} {
		got, err := parseQuery(q)
		if err != nil || got != want {
			t.Errorf("parseQuery(%q) = %+v, %v; want %+v", q, got, err, want)
		}
	}
	for _, q := range []string{"a．．com", "．com", "a。。b", "ａ－.com", "－a.com"} {
		if got, err := parseQuery(q); err == nil || err.Field != "q" {
			t.Errorf("parseQuery(%q) = %+v, %v; want invalid_argument at q", q, got, err)
		}
	}
}
