package analytics

import (
	"net/url"
	"testing"
)

// pageURLSeeds are URLs as browsers and PostHog clients send them, and the
// cases around the plain ones that url.Parse reads differently.
var pageURLSeeds = []string{
	"", "/", "/pricing", "/a/b?c=d#e", "//cdn.example/x", "?q=1", "#top", "pricing",
	"https://shop.example/p1", "https://shop.example", "https://shop.example/", "http://shop.example:8080/a?utm_source=x&utm_medium=y#f",
	"https://Shop.Example/P?Q", "https://www.news.example/", "https://a.example/p?x=%zz", "https://a.example/p#frag%zz",
	"https://a.example/p#frag%41", "https://a.example/%41b", "https://a.example/a%2Fb", "https://a.example/a b", "https://a.example/é",
	"https://user:pw@a.example/", "https://[::1]:80/x", "https://a.example:/x", "https://a.example:x/", "https://a.example:1:2/",
	"https://a_b.example~/x", "https://a%41.example/", "https:///x", "https://", "http:/x", "HTTPS://a.example/x", "ftp://a.example/x",
	"https://a.example/x\x00", "https://a.example/x\x7f", "https://a.example\t/", "mailto:a@b.example", "$direct", "https://a.example?x#y?z",
	"https://a.example/;p?q=1;2", "https://a.example/./../x", "javascript:alert(1)", "https://a.example/x?%", "/a:b", "/%zz",
}

func urlParseAnswer(s string) pageURL {
	u, err := url.Parse(s)
	if err != nil {
		return pageURL{}
	}
	return pageURL{path: u.Path, host: u.Hostname(), rawQuery: u.RawQuery}
}

// TestParsePageURLMatchesURLParse: capture's URL reading answers what
// url.Parse answers (path, host, raw query; nothing for a URL it
// refuses), and reads the browsers' plain URLs itself.
func TestParsePageURLMatchesURLParse(t *testing.T) {
	for _, s := range pageURLSeeds {
		if got, want := parsePageURL(s), urlParseAnswer(s); got != want {
			t.Errorf("parsePageURL(%q) = %+v, url.Parse reads %+v", s, got, want)
		}
	}
	for _, s := range []string{"https://shop.example/p1", "http://shop.example:8080/a?utm_source=x#f", "/pricing?x=1", "https://www.news.example/"} {
		if _, ok := plainPageURL(s); !ok {
			t.Errorf("%q is handed to url.Parse; it is a plain URL", s)
		}
	}
}

// FuzzParsePageURLMatchesURLParse holds parsePageURL to url.Parse's
// answers for any text.
func FuzzParsePageURLMatchesURLParse(f *testing.F) {
	for _, s := range pageURLSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := parsePageURL(s), urlParseAnswer(s); got != want {
			t.Errorf("parsePageURL(%q) = %+v, url.Parse reads %+v", s, got, want)
		}
	})
}

func BenchmarkParsePageURL(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if p := parsePageURL("https://shop.example/p7?utm_source=news"); p.host == "" {
			b.Fatal(p)
		}
	}
}
