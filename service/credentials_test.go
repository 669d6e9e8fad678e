package service

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestPKCEProperties(t *testing.T) {
	verifierGen := rapid.StringOfN(rapid.SampledFrom([]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")), 43, 128, -1)
	rapid.Check(t, func(t *rapid.T) {
		v := verifierGen.Draw(t, "verifier")
		c := PKCEChallenge(v)
		if !ValidChallenge(c) {
			t.Fatalf("challenge %q of %q is not a valid S256 challenge", c, v)
		}
		if !VerifyPKCE(c, v) {
			t.Fatalf("verifier %q does not verify its own challenge", v)
		}
		other := verifierGen.Draw(t, "other")
		if other != v && VerifyPKCE(c, other) {
			t.Fatalf("different verifier %q verified challenge of %q", other, v)
		}
		// Any single-character change breaks it.
		i := rapid.IntRange(0, len(v)-1).Draw(t, "i")
		flipped := []byte(v)
		if flipped[i] == 'a' {
			flipped[i] = 'b'
		} else {
			flipped[i] = 'a'
		}
		if VerifyPKCE(c, string(flipped)) {
			t.Fatalf("flipped verifier verified")
		}
	})
	// RFC 7636 appendix B.
	assert.Equal(t, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", PKCEChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
	assert.False(t, VerifyPKCE(PKCEChallenge("short"), "short"), "verifiers under 43 chars are refused")
	assert.False(t, ValidChallenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="), "padding refused")
	assert.False(t, ValidChallenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"), "base64 std alphabet refused")
}

type testState struct {
	Expiring
	Port      int    `json:"port"`
	Challenge string `json:"challenge"`
}

func TestSignedStateProperties(t *testing.T) {
	s := Signer{key: []byte("0123456789abcdef0123456789abcdef")}
	rapid.Check(t, func(t *rapid.T) {
		in := testState{
			Expiring:  Expiring{Exp: rapid.Int64Range(0, 1<<40).Draw(t, "exp")},
			Port:      rapid.IntRange(1024, 65535).Draw(t, "port"),
			Challenge: rapid.String().Draw(t, "challenge"),
		}
		sealed, err := s.Seal("cli", in)
		if err != nil {
			t.Fatal(err)
		}
		var out testState
		if err := s.Open("cli", sealed, &out); err != nil || out != in {
			t.Fatalf("round trip: %v %+v != %+v", err, out, in)
		}
		if err := s.Open("web", sealed, &out); err == nil {
			t.Fatalf("state sealed for cli opened as web")
		}
		// Tampering with any byte is detected.
		b := []byte(sealed)
		i := rapid.IntRange(0, len(b)-1).Draw(t, "i")
		c := rapid.ByteRange('0', 'z').Draw(t, "c")
		if b[i] == c {
			return
		}
		b[i] = c
		var tampered testState
		if err := s.Open("cli", string(b), &tampered); err == nil && tampered != in {
			t.Fatalf("tampered state %q accepted as %+v", b, tampered)
		}
		other := Signer{key: []byte("another key of the same length!!")}
		if err := other.Open("cli", sealed, &out); err == nil {
			t.Fatalf("state opened under another key")
		}
	})
	st := testState{Expiring: Expiring{Exp: time.Now().Add(-time.Second).Unix()}}
	assert.True(t, st.Expired(time.Now()))
}

func TestCredentials(t *testing.T) {
	raw, hash := NewCredential(PrefixUserKey)
	assert.True(t, strings.HasPrefix(raw, "svc_u_v1_"))
	assert.Len(t, raw, len("svc_u_v1_")+43)
	assert.Equal(t, hash, HashSecret(raw))
	assert.True(t, EqualHash(hash, HashSecret(raw)))
	raw2, _ := NewCredential(PrefixUserKey)
	assert.NotEqual(t, raw, raw2)
	assert.Equal(t, PrefixCompanyKey, CredentialPrefix("svc_c_v1_x"))
	assert.Equal(t, "", CredentialPrefix("eyJhbGciOi"))
}
