package service

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Errors of OpenState.
var (
	ErrStateInvalid = errors.New("state is malformed or its signature does not match")
	ErrStateExpired = errors.New("state has expired")
)

// Signer signs small JSON payloads with HMAC-SHA256 under a purpose label,
// so a value signed for one use (say the CLI login state) is never accepted
// for another.
type Signer struct{ key []byte }

func (s Signer) mac(purpose string, payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)
}

// Seal returns base64url(payload) "." base64url(mac).
func (s Signer) Seal(purpose string, v any) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, payload)), nil
}

// Open verifies a sealed value and decodes it into v. It does not look at
// expiry; see Expiring.
func (s Signer) Open(purpose, sealed string, v any) error {
	p, m, ok := strings.Cut(sealed, ".")
	if !ok {
		return ErrStateInvalid
	}
	payload, err := decodeCanonical(p)
	if err != nil {
		return ErrStateInvalid
	}
	mac, err := decodeCanonical(m)
	if err != nil || !hmac.Equal(mac, s.mac(purpose, payload)) {
		return ErrStateInvalid
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return ErrStateInvalid
	}
	return nil
}

// decodeCanonical decodes unpadded base64url written exactly as Seal
// writes it. The decoder alone ignores line breaks and accepts non-zero
// trailing bits, so several texts would open to one value (found by
// FuzzSignedState): a sealed value must have one spelling only.
func decodeCanonical(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != s {
		return nil, ErrStateInvalid
	}
	return b, nil
}

// Derive returns a secret derived from the key for one purpose and input
// (used for the PKCE verifier holdco sends to the identity provider, which
// must be recomputable from the signed state alone).
func (s Signer) Derive(purpose, input string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("derive:"+purpose, []byte(input)))
}

// Expiring is embedded in sealed payloads that expire.
type Expiring struct {
	Exp int64 `json:"exp"`
}

func (e Expiring) Expired(now time.Time) bool { return now.Unix() > e.Exp }

// OpenUnverified decodes a sealed payload without checking its MAC. Only
// for reading a hint (the CLI's loopback port) off a state that failed
// verification.
func (Signer) OpenUnverified(sealed string, v any) error {
	p, _, _ := strings.Cut(sealed, ".")
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return ErrStateInvalid
	}
	return json.Unmarshal(payload, v)
}
