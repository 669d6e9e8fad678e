package files_test

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"holdco/models"
	"holdco/service/files"
)

// FuzzNormalizePath checks the multipart path, file name and prefix
// rules: an accepted path is NFC, relative, has no empty, "." or ".."
// segment, never escapes its folder once joined (path.Clean keeps it), is
// within the byte limits and normalizes to itself again; an accepted prefix
// ends in exactly one "/", matches the files under it and never a sibling
// that merely shares its first letters. Every refusal is invalid_argument.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range [][2]string{
		{"reports/q1.pdf", "q1.pdf"}, {"", `C:\Users\me\report.pdf`}, {"docs/", "a.txt"},
		{"../etc/passwd", "x"}, {"a//b", "x"}, {"a/./b", "x"}, {"/abs", "x"}, {"e\u0301t\u00e9/", "caf\u00e9"},
		{"a\u2028b", "x"}, {"a\\b", "x"}, {"a/\u0000", "x"}, {strings.Repeat("a/", 600), "x"}, {"a\xffb", "x"},
		{".", ""}, {"", ".."}, {"\u212b", "\u0041\u030a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, filename string) {
		got, err := files.NormalizePath(p, filename)
		checkAccepted(t, "path", got, err)
		if err == nil {
			if again, err := files.NormalizePath(got, "ignored"); err != nil || again != got {
				t.Fatalf("NormalizePath(%q) = %q, %v: not idempotent", got, again, err)
			}
			if (p == "" || strings.HasSuffix(p, "/")) && !strings.HasPrefix(got, norm.NFC.String(p)) {
				t.Fatalf("folder %q lost: %q", p, got)
			}
		}
		name, err := files.NormalizeFilename(filename)
		checkAccepted(t, "file", name, err)
		if err == nil && strings.Contains(name, "/") {
			t.Fatalf("file name %q holds a /", name)
		}
		prefix, err := files.NormalizePrefix(p)
		if err != nil {
			checkAccepted(t, "prefix", "", err)
			return
		}
		if !strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, "//") {
			t.Fatalf("prefix %q does not end in exactly one /", prefix)
		}
		checkAccepted(t, "prefix", strings.TrimSuffix(prefix, "/"), nil)
		if again, err := files.NormalizePrefix(prefix); err != nil || again != prefix {
			t.Fatalf("NormalizePrefix(%q) = %q, %v: not idempotent", prefix, again, err)
		}
		// A file under the prefix matches it; a sibling sharing its text
		// does not.
		under := prefix + "x"
		if !strings.HasPrefix(under, prefix) {
			t.Fatal("unreachable")
		}
		if sibling := strings.TrimSuffix(prefix, "/") + "x/y"; strings.HasPrefix(sibling, prefix) {
			t.Fatalf("prefix %q matches the sibling %q", prefix, sibling)
		}
	})
}

func checkAccepted(t *testing.T, field, p string, err error) {
	t.Helper()
	if err != nil {
		if !models.IsCode(err, models.CodeInvalidArgument) {
			t.Fatalf("%s: refusal is not invalid_argument: %v", field, err)
		}
		return
	}
	switch {
	case !utf8.ValidString(p) || !norm.NFC.IsNormalString(p):
		t.Fatalf("%s %q is not NFC UTF-8", field, p)
	case len(p) == 0 || len(p) > files.MaxPathBytes:
		t.Fatalf("%s %q has %d bytes", field, p, len(p))
	case strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00"):
		t.Fatalf("%s %q is absolute or holds a backslash or NUL", field, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || len(seg) > files.MaxSegmentBytes {
			t.Fatalf("%s %q has the segment %q", field, p, seg)
		}
	}
	// Joined under a company's folder it stays there.
	if joined := path.Join("/company", p); !strings.HasPrefix(joined, "/company/") || joined != "/company/"+p {
		t.Fatalf("%s %q escapes or changes when joined: %q", field, p, joined)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u2028' || r == '\u2029' {
			t.Fatalf("%s %q holds U+%04X", field, p, r)
		}
	}
}
