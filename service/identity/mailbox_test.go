package identity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestNormalizeMailbox(t *testing.T) {
	cases := map[string]string{
		"Ada@Example.com":             "ada@example.com",
		"ada+news@example.com":        "ada@example.com",
		"a.d.a@example.com":           "a.d.a@example.com",
		"A.D.A+x@GoogleMail.com":      "ada@gmail.com",
		"  ada@gmail.com ":            "ada@gmail.com",
		"+tag@example.com":            "+tag@example.com",
		"not-an-address":              "not-an-address",
		"odd@multiple@at.example.com": "odd@multiple@at.example.com",
	}
	for in, want := range cases {
		require.Equal(t, want, NormalizeMailbox(in), in)
	}
	rapid.Check(t, func(t *rapid.T) {
		local := rapid.StringMatching(`[a-z0-9.]{1,20}`).Draw(t, "local")
		tag := rapid.StringMatching(`[a-z0-9]{0,8}`).Draw(t, "tag")
		n := NormalizeMailbox(strings.ToUpper(local) + "+" + tag + "@Example.COM")
		if n != NormalizeMailbox(local+"@example.com") {
			t.Fatalf("tag or case changed the mailbox: %q", n)
		}
		if NormalizeMailbox(n) != n {
			t.Fatalf("not idempotent: %q", n)
		}
	})
}
