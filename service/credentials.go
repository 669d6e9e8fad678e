package service

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Credential prefixes. Only SHA-256 hashes of the raw values are stored.
const (
	PrefixUserKey    = "svc_u_v1_" // CLI session key or personal access token
	PrefixCompanyKey = "svc_c_v1_"
	PrefixAdminToken = "svc_a_v1_"
)

// NewSecret returns a random URL-safe string carrying n bytes of entropy.
func NewSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewCredential mints a raw credential with prefix and returns it with the
// hash to store.
func NewCredential(prefix string) (raw, hash string) {
	raw = prefix + NewSecret(32)
	return raw, HashSecret(raw)
}

// HashSecret is the stored form of a token, key or code.
func HashSecret(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// EqualHash compares two hex hashes in constant time.
func EqualHash(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// CredentialPrefix tells the credential family from its prefix.
func CredentialPrefix(raw string) string {
	switch {
	case strings.HasPrefix(raw, PrefixUserKey):
		return PrefixUserKey
	case strings.HasPrefix(raw, PrefixCompanyKey):
		return PrefixCompanyKey
	case strings.HasPrefix(raw, PrefixAdminToken):
		return PrefixAdminToken
	}
	return ""
}
