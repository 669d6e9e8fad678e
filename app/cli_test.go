package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/devoidc"
	"holdco/usercli"
)

// browser plays the user's browser for `holdco login`: it signs in at the
// embedded provider and follows holdco's redirect to the CLI's loopback
// port.
func loopbackBrowser(t *testing.T, email string) func(string) error {
	return func(authURL string) error {
		back, err := devoidc.SignIn(context.Background(), authURL, email, "correct horse")
		if err != nil {
			return err
		}
		loopback := location(t, noFollow, back.String())
		resp, err := http.Get(loopback.String())
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}

// deviceBrowser approves a device login in a fresh browser session.
func deviceBrowser(t *testing.T, base, email string) func(string) error {
	return func(verification string) error {
		jar, _ := cookiejar.New(nil)
		b := &http.Client{Jar: jar, CheckRedirect: noFollow.CheckRedirect}
		login := location(t, b, verification)
		authURL := location(t, b, base+login.RequestURI())
		back, err := devoidc.SignIn(context.Background(), authURL.String(), email, "correct horse")
		if err != nil {
			return err
		}
		page := location(t, b, back.String())
		resp, err := b.Get(base + page.RequestURI())
		if err != nil {
			return err
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		csrf := csrfField.FindStringSubmatch(string(html))
		require.Len(t, csrf, 2, string(html))
		code, _ := url.ParseQuery(page.RawQuery)
		resp, err = b.PostForm(base+"/auth/cli/device", url.Values{"user_code": {code.Get("user_code")}, "csrf": {csrf[1]}, "decision": {"approve"}})
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}

func cliEnv(t *testing.T, base, configDir string) (usercli.Env, *bytes.Buffer) {
	var out bytes.Buffer
	env := usercli.Env{
		Stdout: &out, Stderr: io.Discard, HTTP: http.DefaultClient,
		Getenv: func(k string) string {
			return map[string]string{"HOLDCO_API_URL": base, "HOLDCO_CONFIG_DIR": configDir}[k]
		},
		Sleep: func(context.Context, time.Duration) error { return nil },
	}
	return env, &out
}

func TestCLICommandsAgainstTheServer(t *testing.T) {
	t.Parallel()
	base := startEmbedded(t)
	ctx := context.Background()
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	require.NoError(t, os.WriteFile(creds, []byte("{}"), 0o644)) // an old, too open file

	env, out := cliEnv(t, base, dir)
	env.OpenBrowser = loopbackBrowser(t, "ada@example.com")
	require.NoError(t, usercli.Login(ctx, env, []string{"--env", "test"}))
	assert.Contains(t, out.String(), "Signed in as ada@example.com")
	info, err := os.Stat(creds)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	raw, _ := os.ReadFile(creds)
	assert.Contains(t, string(raw), `"access_token": "svc_u_v1_`)

	out.Reset()
	require.NoError(t, usercli.Whoami(ctx, env, nil))
	assert.Contains(t, out.String(), "ada@example.com (ada) — session_key")

	out.Reset()
	require.NoError(t, usercli.Tokens(ctx, env, []string{"create", "--name", "ci", "--expires-in-days", "30"}))
	pat := strings.TrimSpace(out.String())
	assert.True(t, strings.HasPrefix(pat, "svc_u_v1_"))
	out.Reset()
	require.NoError(t, usercli.Tokens(ctx, env, []string{"list"}))
	assert.Contains(t, out.String(), "ci")
	fields := strings.Fields(strings.Split(out.String(), "\n")[1])
	out.Reset()
	require.NoError(t, usercli.Tokens(ctx, env, []string{"revoke", fields[0]}))
	err = usercli.Tokens(ctx, env, []string{"revoke", "00000000-0000-4000-8000-000000000000"})
	assert.ErrorContains(t, err, "No personal access token")
	err = usercli.Tokens(ctx, env, []string{"create", "--name", ""})
	assert.ErrorContains(t, err, "invalid request")

	require.NoError(t, usercli.Logout(ctx, env, nil))
	_, err = os.Stat(creds)
	assert.True(t, os.IsNotExist(err))
	require.NoError(t, usercli.Logout(ctx, env, nil), "idempotent")
	assert.ErrorContains(t, usercli.Whoami(ctx, env, nil), "holdco login")
}

func TestCLIDeviceLoginAndRefusal(t *testing.T) {
	t.Parallel()
	base := startEmbedded(t)
	ctx := context.Background()
	env, out := cliEnv(t, base, t.TempDir())
	env.OpenBrowser = deviceBrowser(t, base, "bea@example.com")
	require.NoError(t, usercli.Login(ctx, env, []string{"--device"}))
	assert.Contains(t, out.String(), "Signed in as bea@example.com")
	out.Reset()
	require.NoError(t, usercli.Whoami(ctx, env, nil))
	assert.Contains(t, out.String(), "bea@example.com")

	// The browser comes back with an error: login fails, nothing stored.
	env2, _ := cliEnv(t, base, t.TempDir())
	env2.OpenBrowser = func(authURL string) error {
		u, _ := url.Parse(authURL)
		state := u.Query().Get("state")
		loopback := location(t, noFollow, base+"/auth/cli/callback?error=access_denied&state="+url.QueryEscape(state))
		resp, err := http.Get(loopback.String())
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := usercli.Login(ctx, env2, nil)
	assert.ErrorContains(t, err, "access_denied")
	assert.ErrorContains(t, usercli.Whoami(ctx, env2, nil), "holdco login")
}
