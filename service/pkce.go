package service

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// PKCEChallenge is the S256 code challenge of a verifier (RFC 7636).
func PKCEChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// VerifyPKCE reports whether verifier matches the S256 challenge, in
// constant time. Verifiers must be 43–128 characters (RFC 7636 §4.1).
func VerifyPKCE(challenge, verifier string) bool {
	if len(verifier) < 43 || len(verifier) > 128 || !isUnreserved(verifier) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(PKCEChallenge(verifier)), []byte(challenge)) == 1
}

// ValidChallenge reports whether s has the shape of an S256 challenge:
// 43 characters of unpadded base64url spelling a SHA-256 sum, as
// PKCEChallenge writes it (no line breaks, no non-zero trailing bits: such
// a challenge could never be met, found by FuzzPKCE).
func ValidChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil && len(b) == sha256.Size && base64.RawURLEncoding.EncodeToString(b) == s
}

func isUnreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return false
		}
	}
	return true
}
