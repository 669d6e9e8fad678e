package service

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// sealer encrypts values holdco must show again later (company API keys)
// with AES-256-GCM under a key derived from the instance secret.
type sealer struct{ aead cipher.AEAD }

func newSealer(s signer) (sealer, error) {
	key := s.mac("derive:seal", []byte("company-api-key")) // 32 bytes
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealer{}, err
	}
	return sealer{aead: aead}, nil
}

func (s sealer) Seal(plain, aad string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(plain), []byte(aad))
}

func (s sealer) Open(sealed []byte, aad string) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed value too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(aad))
	return string(plain), err
}
