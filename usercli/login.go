package usercli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

type grant struct {
	AccessToken    string         `json:"access_token"`
	User           map[string]any `json:"user"`
	ConglomerateID string         `json:"conglomerate_id"`
}

// Login signs in with the loopback PKCE flow, or the device flow with
// --device, and stores the session key.
func Login(ctx context.Context, e Env, args []string) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	api := fs.String("api", "", "holdco REST address (default $HOLDCO_API_URL or http://localhost:8080)")
	device := fs.Bool("device", false, "use the device-code flow (approve in any browser)")
	env := fs.String("env", "", "name of this environment, shown in the session's name")
	signUp := fs.Bool("sign-up", false, "show the sign-up screen")
	noBrowser := fs.Bool("no-browser", false, "print the URL without opening a browser")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base := e.apiURL(*api)
	if *noBrowser {
		e.OpenBrowser = func(string) error { return nil }
	}
	var g grant
	var err error
	if *device {
		g, err = deviceLogin(ctx, e, base)
	} else {
		g, err = loopbackLogin(ctx, e, base, *env, *signUp)
	}
	if err != nil {
		return err
	}
	if err := e.saveCredentials(Credentials{APIURL: base, AccessToken: g.AccessToken, User: g.User, ConglomerateID: g.ConglomerateID}); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	fmt.Fprintf(e.Stdout, "Signed in as %v.\n", g.User["email"])
	return nil
}

func loopbackLogin(ctx context.Context, e Env, base, env string, signUp bool) (grant, error) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return grant{}, fmt.Errorf("listen on a loopback port: %w", err)
	}
	defer l.Close()
	q := url.Values{"port": {strconv.Itoa(l.Addr().(*net.TCPAddr).Port)}, "code_challenge": {challenge}}
	if env != "" {
		q.Set("env", env)
	}
	if signUp {
		q.Set("screen_hint", "sign-up")
	}
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
		ExpiresIn        int    `json:"expires_in"`
	}
	if _, err := e.call(ctx, http.MethodGet, base+"/auth/cli/start?"+q.Encode(), "", nil, &start); err != nil {
		return grant{}, err
	}

	type result struct{ code, err string }
	results := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		res := result{code: r.URL.Query().Get("code"), err: r.URL.Query().Get("error")}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if res.code != "" {
			fmt.Fprint(w, "<!doctype html><title>holdco</title><p>Signed in. You can close this tab and return to the terminal.</p>")
		} else {
			fmt.Fprint(w, "<!doctype html><title>holdco</title><p>Sign-in failed. Return to the terminal.</p>")
		}
		select {
		case results <- res:
		default:
		}
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	fmt.Fprintf(e.Stderr, "Opening the browser to sign in. If it does not open, visit:\n  %s\n", start.AuthorizationURL)
	if err := e.OpenBrowser(start.AuthorizationURL); err != nil {
		fmt.Fprintf(e.Stderr, "(could not open a browser: %v)\n", err)
	}
	wait, cancel := context.WithTimeout(ctx, time.Duration(max(start.ExpiresIn, 60))*time.Second)
	defer cancel()
	var res result
	select {
	case <-wait.Done():
		return grant{}, errors.New("the sign-in was not completed in time")
	case res = <-results:
	}
	if res.code == "" {
		return grant{}, fmt.Errorf("sign-in failed: %s", res.err)
	}
	var g grant
	_, err = e.call(ctx, http.MethodPost, base+"/auth/cli/token", "", map[string]string{"code": res.code, "code_verifier": verifier}, &g)
	return g, err
}

func deviceLogin(ctx context.Context, e Env, base string) (grant, error) {
	var start struct {
		DeviceCode              string `json:"device_code"`
		UserCode                string `json:"user_code"`
		VerificationURI         string `json:"verification_uri"`
		VerificationURIComplete string `json:"verification_uri_complete"`
		Interval                int    `json:"interval"`
		ExpiresIn               int    `json:"expires_in"`
	}
	if _, err := e.call(ctx, http.MethodPost, base+"/auth/cli/device/start", "", nil, &start); err != nil {
		return grant{}, err
	}
	fmt.Fprintf(e.Stderr, "To sign in, open %s and confirm the code %s\n  (direct link: %s)\n", start.VerificationURI, start.UserCode, start.VerificationURIComplete)
	if err := e.OpenBrowser(start.VerificationURIComplete); err != nil {
		fmt.Fprintf(e.Stderr, "(could not open a browser: %v)\n", err)
	}
	interval := time.Duration(start.Interval) * time.Second
	deadline := time.Now().Add(time.Duration(start.ExpiresIn) * time.Second)
	for first := true; time.Now().Before(deadline); first = false {
		if !first {
			if err := e.Sleep(ctx, interval); err != nil {
				return grant{}, err
			}
		}
		var poll struct {
			grant
			Status   string `json:"status"`
			Interval int    `json:"interval"`
		}
		if _, err := e.call(ctx, http.MethodPost, base+"/auth/cli/device/token", "", map[string]string{"device_code": start.DeviceCode}, &poll); err != nil {
			return grant{}, err
		}
		switch poll.Status {
		case "complete":
			return poll.grant, nil
		case "authorization_pending":
		case "slow_down":
			interval = time.Duration(poll.Interval) * time.Second
		case "access_denied":
			return grant{}, errors.New("the sign-in was denied in the browser")
		case "expired_token":
			return grant{}, errors.New("the code expired; run `holdco login --device` again")
		default:
			return grant{}, fmt.Errorf("unexpected status %q", poll.Status)
		}
	}
	return grant{}, errors.New("the code expired; run `holdco login --device` again")
}
