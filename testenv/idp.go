package testenv

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"testing"

	"holdco/models"
	"holdco/service"
)

// IdP is a hand-written identity provider for tests: AuthURL records the PKCE
// challenge of each state; Exchange checks the verifier against it, as a
// real provider would, and answers the identity queued for the code.
type IdP struct {
	mu         sync.Mutex
	challenges map[string]string // state → challenge
	codes      map[string]string // code → state
	identities map[string]models.Identity
	EndSession string
}

func NewIdP() *IdP {
	return &IdP{challenges: map[string]string{}, codes: map[string]string{}, identities: map[string]models.Identity{}}
}

func (f *IdP) Issuer() string { return "https://idp.test" }

func (f *IdP) AuthURL(_ context.Context, redirectURI, state, challenge string, params map[string]string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.challenges[state] = challenge
	q := url.Values{"state": {state}, "redirect_uri": {redirectURI}, "code_challenge": {challenge}}
	for k, v := range params {
		q.Set(k, v)
	}
	return "https://idp.test/authorize?" + q.Encode(), nil
}

// Approve is the user signing in at the provider: it returns the code the
// provider would send back with state.
func (f *IdP) Approve(state, email, subject string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	code := "code-" + subject + "-" + state[len(state)-8:]
	f.codes[code] = state
	f.identities[code] = models.Identity{Issuer: f.Issuer(), Subject: subject, Email: email, EmailVerified: true, Name: subject}
	return code
}

func (f *IdP) Exchange(_ context.Context, _, code, verifier string) (models.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	state, ok := f.codes[code]
	if !ok {
		return models.Identity{}, errors.New("invalid_grant")
	}
	delete(f.codes, code)
	if service.PKCEChallenge(verifier) != f.challenges[state] {
		return models.Identity{}, errors.New("invalid_grant: pkce")
	}
	return f.identities[code], nil
}

func (f *IdP) EndSessionURL(_ context.Context, _, postLogoutRedirect string) string {
	if f.EndSession == "" {
		return ""
	}
	return f.EndSession + "?post_logout_redirect_uri=" + url.QueryEscape(postLogoutRedirect)
}

// StateOf returns the state parameter of an authorization URL.
func StateOf(t testing.TB, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatalf("testenv: parse %q: %v", authURL, err)
	}
	return u.Query().Get("state")
}
