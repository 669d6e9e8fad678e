package devoidc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/devoidc"
	"holdco/providers/oidcrp"
	"holdco/service"
	"holdco/testenv"
)

// TestSignInAcrossTwoProcesses: two providers (as two API processes) on
// one database (SQLite, or Postgres with TEST_DATABASE_URL) behind a
// round-robin balancer, sharing the client secret, the signing key and
// StoredState. Every step of a sign-in lands on the other process than
// the step before; the code is exchanged on one, the access token's
// userinfo answers on both, and the code does not work twice.
func TestSignInAcrossTwoProcesses(t *testing.T) {
	st := testenv.NewStore(t)
	der, err := devoidc.NewSigningKey()
	require.NoError(t, err)
	key, err := devoidc.ParseSigningKey(der)
	require.NoError(t, err)

	var handlers [2]http.Handler
	var turn atomic.Int64
	balancer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[turn.Add(1)%2].ServeHTTP(w, r)
	}))
	t.Cleanup(balancer.Close)
	issuer, callback := balancer.URL+"/dev-idp", balancer.URL+"/cb"
	var direct [2]*httptest.Server
	for i := range handlers {
		p, err := devoidc.New(context.Background(), devoidc.Options{
			Issuer:     issuer,
			Clients:    []devoidc.Client{{ID: "holdco", Secret: "s3cret", RedirectURIs: []string{callback}}},
			Users:      devoidc.StoredUsers{Rows: st.Identity()},
			State:      devoidc.StoredState{Rows: st.Identity()},
			SigningKey: key,
			CryptoKey:  [32]byte{1, 2, 3},
			Logger:     slog.New(slog.DiscardHandler),
		})
		require.NoError(t, err)
		handlers[i] = p.Handler()
		direct[i] = httptest.NewServer(p.Handler())
		t.Cleanup(direct[i].Close)
	}
	rp := oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: "holdco", ClientSecret: "s3cret", RedirectURIs: []string{callback}})
	ctx := context.Background()
	start := func(state string) string {
		authURL, err := rp.AuthURL(ctx, callback, state, service.PKCEChallenge(verifier), nil)
		require.NoError(t, err)
		return authURL
	}

	// The relying party's own exchange: the ID token, signed by either
	// process, verifies against the keys either publishes.
	back, err := devoidc.SignIn(ctx, start("s1"), "ada@example.com", "correct horse")
	require.NoError(t, err)
	require.Equal(t, "s1", back.Query().Get("state"))
	id, err := rp.Exchange(ctx, callback, back.Query().Get("code"), verifier)
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", id.Email)
	assert.NotEmpty(t, id.Subject)

	// Sign-ins started on process 0 and finished on process 1 (and the
	// other way round), by hand: the token endpoint and userinfo.
	for first := range 2 {
		turn.Store(int64(first) - 1) // the next request goes to process `first`
		back, err := devoidc.SignIn(ctx, start("s2"), "ada@example.com", "correct horse")
		require.NoError(t, err)
		code := back.Query().Get("code")
		require.NotEmpty(t, code)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {verifier}}
		status, body := post(t, direct[1-first].URL+"/dev-idp/oauth/token", form)
		require.Equal(t, http.StatusOK, status, body)
		var tok struct {
			AccessToken string `json:"access_token"`
			IDToken     string `json:"id_token"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &tok))
		require.NotEmpty(t, tok.AccessToken)
		require.NotEmpty(t, tok.IDToken)
		for _, srv := range direct {
			status, body := userinfo(t, srv.URL, tok.AccessToken)
			require.Equal(t, http.StatusOK, status, body)
			assert.Contains(t, body, `"sub":"`+id.Subject+`"`)
			assert.Contains(t, body, `"email":"ada@example.com"`)
		}
		status, body = post(t, direct[first].URL+"/dev-idp/oauth/token", form)
		assert.NotEqual(t, http.StatusOK, status, "a code works once, on any process: %s", body)
		status, _ = userinfo(t, direct[first].URL, tok.AccessToken+"x")
		assert.NotEqual(t, http.StatusOK, status, "a forged token is refused")
	}
}

func post(t *testing.T, u string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("holdco", "s3cret")
	return do(t, req)
}

func userinfo(t *testing.T, base, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/dev-idp/userinfo", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestStoredStateExpires: an expired sign-in or token is not read, and
// the sign-in code sweep deletes its rows.
func TestStoredStateExpires(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	state := devoidc.StoredState{Rows: st.Identity(), Now: func() time.Time { return now }}
	require.NoError(t, state.CreateRequest(ctx, devoidc.Request{ID: "2b1e0d5e-0000-4000-8000-000000000001", ExpiresAt: now.Add(time.Minute)}))
	require.NoError(t, state.SetCode(ctx, "2b1e0d5e-0000-4000-8000-000000000001", "code-1"))
	require.NoError(t, state.CreateToken(ctx, devoidc.Token{ID: "2b1e0d5e-0000-4000-8000-000000000002", Subject: "u", Scopes: []string{"openid", "email"}, ExpiresAt: now.Add(time.Minute)}))
	r, err := state.RequestByCode(ctx, "code-1")
	require.NoError(t, err)
	assert.Equal(t, "2b1e0d5e-0000-4000-8000-000000000001", r.ID)
	tok, err := state.Token(ctx, "2b1e0d5e-0000-4000-8000-000000000002")
	require.NoError(t, err)
	assert.Equal(t, []string{"openid", "email"}, tok.Scopes)

	n, err := st.Identity().DeleteExpiredSignInCodes(ctx, time.Now(), 100)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing expired yet")

	now = now.Add(2 * time.Minute)
	_, err = state.Request(ctx, "2b1e0d5e-0000-4000-8000-000000000001")
	assert.Error(t, err, "an expired sign-in is not read")
	_, err = state.RequestByCode(ctx, "code-1")
	assert.Error(t, err)
	_, err = state.Token(ctx, "2b1e0d5e-0000-4000-8000-000000000002")
	assert.Error(t, err, "an expired token is not read")
	assert.Error(t, state.Complete(ctx, "2b1e0d5e-0000-4000-8000-000000000001", "u", now))

	n, err = st.Identity().DeleteExpiredSignInCodes(ctx, now, 100)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the sweep deletes the expired sign-in and token")
}
