package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"holdco/providers/devoidc"
	"holdco/service"
)

// Password is the local users' password at the embedded development
// identity provider.
const Password = "harness-password"

// HTTP is the client of Call: no redirects followed (sign-in and
// downloads read them).
var HTTP = &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Answer is a response read whole; Status 0 is a transport error (Body
// then holds it).
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends one request with a JSON body (when body is not nil) and a
// bearer token (when not empty).
func Do(method, u, bearer string, body any) Answer {
	return DoWith(method, u, bearer, nil, body)
}

// DoWith is Do with extra request headers (an Idempotency-Key, say).
func DoWith(method, u, bearer string, header http.Header, body any) Answer {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return Answer{Body: []byte(err.Error())}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := HTTP.Do(req)
	if err != nil {
		return Answer{Body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Call sends one request and returns its status and body.
func Call(method, u, bearer string, body any) (int, []byte) {
	a := Do(method, u, bearer, body)
	return a.Status, a.Body
}

// Unacknowledged: the request may not have reached the service or its
// answer was lost (a proxy's 502/503, a cut connection).
func Unacknowledged(status int) bool {
	return status == 0 || status == http.StatusBadGateway || status == http.StatusServiceUnavailable
}

// CallRetry repeats a request the service did not acknowledge until it
// is answered or the bound passes. For reads, and for writes whose
// repetition is harmless or checked.
func CallRetry(method, u, bearer string, body any, bound time.Duration) (int, []byte) {
	deadline := time.Now().Add(bound)
	for {
		s, b := Call(method, u, bearer, body)
		if !Unacknowledged(s) || time.Now().After(deadline) {
			return s, b
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// JSONCall calls (retrying what was not acknowledged for two minutes)
// and decodes a JSON answer, requiring the given status.
func JSONCall(method, u, bearer string, body any, want int, out any) error {
	s, b := CallRetry(method, u, bearer, body, 2*time.Minute)
	if s != want {
		return fmt.Errorf("%s %s: want %d, got %d: %.400s", method, PathOf(u), want, s, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w: %.200s", method, PathOf(u), err, b)
		}
	}
	return nil
}

// PathOf is the path of a URL (for messages without hosts and queries).
func PathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Path
}

// NewVerifier is a PKCE code verifier.
func NewVerifier() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SignIn signs a local user in the way `holdco login` does (loopback
// PKCE through the embedded development identity provider) at base and
// returns the session key.
func SignIn(ctx context.Context, base, email string) (string, error) {
	verifier := NewVerifier()
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := JSONCall("GET", base+"/auth/cli/start?port=40999&code_challenge="+service.PKCEChallenge(verifier), "", nil, 200, &start); err != nil {
		return "", err
	}
	back, err := devoidc.SignIn(ctx, start.AuthorizationURL, email, Password)
	if err != nil {
		return "", err
	}
	if back == nil {
		return "", errors.New("the identity provider did not redirect back")
	}
	resp, err := HTTP.Get(back.String())
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loopback, err := resp.Location()
	if err != nil {
		return "", fmt.Errorf("callback answered %d without a redirect: %.300s", resp.StatusCode, b)
	}
	code := loopback.Query().Get("code")
	if code == "" {
		return "", fmt.Errorf("callback redirected without a code: %s", loopback.RawQuery)
	}
	var grant struct {
		AccessToken string `json:"access_token"`
	}
	if err := JSONCall("POST", base+"/auth/cli/token", "", map[string]string{"code": code, "code_verifier": verifier}, 200, &grant); err != nil {
		return "", err
	}
	return grant.AccessToken, nil
}
