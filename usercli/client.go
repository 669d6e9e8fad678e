// Package usercli is the user side of the holdco command: login (loopback
// PKCE or device code), logout, whoami and personal access tokens. It
// talks to the REST API only.
package usercli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Env is what the commands need from the process; tests replace parts.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	HTTP           *http.Client
	// OpenBrowser opens a URL for the user; failures are not fatal.
	OpenBrowser func(url string) error
	// Sleep waits between device-flow polls.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultEnv is the real process environment.
func DefaultEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, HTTP: &http.Client{Timeout: 30 * time.Second},
		OpenBrowser: openBrowser, Sleep: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}

// Credentials is what login stores (mode 0600).
type Credentials struct {
	APIURL         string         `json:"api_url"`
	AccessToken    string         `json:"access_token"`
	User           map[string]any `json:"user,omitempty"`
	ConglomerateID string         `json:"conglomerate_id,omitempty"`
}

func (e Env) credentialsPath() (string, error) {
	dir := e.Getenv("HOLDCO_CONFIG_DIR")
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no config directory: %w", err)
		}
		dir = filepath.Join(base, "holdco")
	}
	return filepath.Join(dir, "credentials.json"), nil
}

func (e Env) loadCredentials() (Credentials, error) {
	var c Credentials
	path, err := e.credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, errNotSignedIn
	}
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// saveCredentials writes atomically with mode 0600, whatever mode an older
// file had.
func (e Env) saveCredentials(c Credentials) error {
	path, err := e.credentialsPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

var errNotSignedIn = errors.New("not signed in, or the session was revoked; run `holdco login`")

// apiURL: --api, HOLDCO_API_URL, the stored credentials, the default.
func (e Env) apiURL(flagValue string) string {
	for _, v := range []string{flagValue, e.Getenv("HOLDCO_API_URL")} {
		if v != "" {
			return strings.TrimRight(v, "/")
		}
	}
	if c, err := e.loadCredentials(); err == nil && c.APIURL != "" {
		return c.APIURL
	}
	return "http://localhost:8080"
}

// call sends a JSON request and decodes a 2xx answer into out. Error
// bodies become readable errors.
func (e Env) call(ctx context.Context, method, url, bearer string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach holdco: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, apiError(resp.StatusCode, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("unexpected answer from holdco: %w", err)
		}
	}
	return resp.StatusCode, nil
}

// apiError renders {"error","detail"} bodies and 422 validation lists.
func apiError(status int, raw []byte) error {
	if status == http.StatusUnauthorized {
		return errNotSignedIn
	}
	var body struct {
		Error  string          `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var sentence string
		if json.Unmarshal(body.Detail, &sentence) == nil && sentence != "" {
			return errors.New(sentence)
		}
		var list []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		}
		if json.Unmarshal(body.Detail, &list) == nil && len(list) > 0 {
			parts := make([]string, len(list))
			for i, d := range list {
				parts[i] = fmt.Sprintf("%v: %s", d.Loc, d.Msg)
			}
			return errors.New("invalid request: " + strings.Join(parts, "; "))
		}
	}
	return fmt.Errorf("holdco answered %d", status)
}
