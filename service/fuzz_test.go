package service

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzSignedState: a sealed value opens under its purpose and key to what
// was sealed, and never once any byte of it changes, under another purpose
// or key; arbitrary text never opens (nor panics) without the key.
func FuzzSignedState(f *testing.F) {
	f.Add("web-login", "https://app.example/after?x=1", int64(1700000000), []byte("eyJ4IjoxfQ.c2ln"), 3, byte('A'))
	f.Add("cli-login", "", int64(0), []byte("."), 0, byte('\n'))
	f.Add("", "\u2028", int64(-1), []byte("e30.AAAA\r\n"), 50, byte('_'))
	key := []byte("fuzz-signing-key-0123456789abcdef0123")
	s := Signer{key: key}
	other := Signer{key: []byte("another-key-0123456789abcdef0123456")}
	type payload struct {
		Expiring
		RedirectURL string `json:"redirect_url"`
	}
	f.Fuzz(func(t *testing.T, purpose, redirect string, exp int64, raw []byte, at int, b byte) {
		// Arbitrary input: opens only when it is a seal of ours.
		var junk payload
		if err := s.Open(purpose, string(raw), &junk); err == nil {
			resealed, _ := s.Seal(purpose, junk)
			_ = resealed // a forged value would have to carry our MAC
			p, m, _ := strings.Cut(string(raw), ".")
			pl, _ := base64.RawURLEncoding.DecodeString(p)
			if got := base64.RawURLEncoding.EncodeToString(s.mac(purpose, pl)); got != m {
				t.Fatalf("Open accepted %q whose MAC part is not the canonical MAC", raw)
			}
		}
		_ = s.OpenUnverified(string(raw), &junk)

		in := payload{Expiring{Exp: exp}, redirect}
		sealed, err := s.Seal(purpose, in)
		if err != nil {
			t.Fatal(err)
		}
		var out payload
		if err := s.Open(purpose, sealed, &out); err != nil {
			t.Fatalf("own seal does not open: %v", err)
		}
		if out.Exp != in.Exp {
			t.Fatalf("exp %d became %d", in.Exp, out.Exp)
		}
		// JSON carries text: each invalid byte becomes U+FFFD.
		enc, _ := json.Marshal(in.RedirectURL)
		var want string
		_ = json.Unmarshal(enc, &want)
		if want != out.RedirectURL {
			t.Fatalf("redirect %q became %q", in.RedirectURL, out.RedirectURL)
		}
		if other.Open(purpose, sealed, &out) == nil {
			t.Fatal("opens under another key")
		}
		if s.Open(purpose+"x", sealed, &out) == nil {
			t.Fatal("opens under another purpose")
		}
		// Any change of one byte (replaced, inserted or removed) fails.
		i := int(uint(at) % uint(len(sealed)))
		changed := []string{sealed[:i] + sealed[i+1:], sealed[:i] + string(b) + sealed[i:]}
		if sealed[i] != b {
			changed = append(changed, sealed[:i]+string(b)+sealed[i+1:])
		}
		for _, c := range changed {
			if s.Open(purpose, c, &out) == nil {
				t.Fatalf("a changed seal opens: %q (from %q)", c, sealed)
			}
		}
		if exp > 0 && in.Expired(time.Unix(exp, 0)) {
			t.Fatal("expired at its own second")
		}
	})
}

// FuzzPKCE: a challenge computed from a verifier has the shape of one and
// verifies it; any other verifier, or a verifier outside RFC 7636's
// alphabet and length, does not verify; only canonical challenges (what
// PKCEChallenge can produce) pass ValidChallenge.
func FuzzPKCE(f *testing.F) {
	f.Add("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", 0, byte('x'))
	f.Add("short", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN", 1, byte('.'))
	f.Add(strings.Repeat("a", 128), strings.Repeat("A", 43), 127, byte('~'))
	f.Add(strings.Repeat("a", 129), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw\ncM", 2, byte(0))
	f.Fuzz(func(t *testing.T, verifier, challenge string, at int, b byte) {
		c := PKCEChallenge(verifier)
		if !ValidChallenge(c) {
			t.Fatalf("challenge %q of %q has not the shape of one", c, verifier)
		}
		good := len(verifier) >= 43 && len(verifier) <= 128 && isUnreserved(verifier)
		if VerifyPKCE(c, verifier) != good {
			t.Fatalf("VerifyPKCE(%q, own challenge) = %v, want %v", verifier, !good, good)
		}
		if good {
			i := int(uint(at) % uint(len(verifier)))
			if verifier[i] != b && VerifyPKCE(c, verifier[:i]+string(b)+verifier[i+1:]) {
				t.Fatal("a changed verifier verifies")
			}
			if j := int(uint(at) % uint(len(c))); c[j] != b && VerifyPKCE(c[:j]+string(b)+c[j+1:], verifier) {
				t.Fatal("a changed challenge verifies")
			}
		}
		if ValidChallenge(challenge) {
			raw, err := base64.RawURLEncoding.DecodeString(challenge)
			if err != nil || len(raw) != 32 || base64.RawURLEncoding.EncodeToString(raw) != challenge {
				t.Fatalf("ValidChallenge accepts %q, which no verifier can produce", challenge)
			}
		}
		if VerifyPKCE(challenge, verifier) && challenge != c {
			t.Fatalf("verifies against %q, not its own challenge %q", challenge, c)
		}
	})
}

// FuzzSealer: an encrypted value opens only with its own additional data
// and unchanged bytes.
func FuzzSealer(f *testing.F) {
	f.Add("svc_c_v1_abc", "company-1", []byte{1, 2, 3}, 5)
	f.Add("", "", []byte{}, 0)
	sealer, err := newSealer(Signer{key: []byte("fuzz-signing-key-0123456789abcdef0123")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, plain, aad string, junk []byte, at int) {
		if _, err := sealer.Open(junk, aad); err == nil && len(junk) < 28 {
			t.Fatal("a value shorter than nonce and tag opens")
		}
		sealed := sealer.Seal(plain, aad)
		got, err := sealer.Open(sealed, aad)
		if err != nil || got != plain {
			t.Fatalf("round trip: %q, %v", got, err)
		}
		if _, err := sealer.Open(sealed, aad+"x"); err == nil {
			t.Fatal("opens with other additional data")
		}
		i := int(uint(at) % uint(len(sealed)))
		changed := bytes.Clone(sealed)
		changed[i] ^= 0x01
		if _, err := sealer.Open(changed, aad); err == nil {
			t.Fatal("a changed value opens")
		}
	})
}
