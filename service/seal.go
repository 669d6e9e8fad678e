package service

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// Sealer encrypts values holdco must show again later (company API keys)
// with AES-256-GCM under a key derived from the instance secret.
type Sealer struct{ aead cipher.AEAD }

func newSealer(s Signer) (Sealer, error) {
	key := s.mac("derive:seal", []byte("company-api-key")) // 32 bytes
	block, err := aes.NewCipher(key)
	if err != nil {
		return Sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return Sealer{}, err
	}
	return Sealer{aead: aead}, nil
}

func (s Sealer) Seal(plain, aad string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(plain), []byte(aad))
}

func (s Sealer) Open(sealed []byte, aad string) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed value too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(aad))
	return string(plain), err
}
