// Command benchtoken signs a local user in to a running holdco (embedded
// development identity provider) and prints a credential for a load run:
// by default a new personal access token, signed in the way `holdco login`
// does; with -mcp, an access token of the authorization server for the
// connector, obtained the way an assistant's client does (the connector's
// 401, its protected resource metadata, the authorization server's
// metadata, dynamic registration, authorize with PKCE, sign-in, consent,
// the code redeemed at the token endpoint).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"

	"holdco/providers/devoidc"
	"holdco/scripts/internal/harness"
	"holdco/service"
)

func main() {
	api := flag.String("api", "http://127.0.0.1:8080", "holdco REST address")
	mcpURL := flag.String("mcp", "", "the connector's address: print an OAuth access token for it instead of a personal access token")
	email := flag.String("email", "bench@example.com", "local user")
	flag.Parse()
	ctx := context.Background()
	if *mcpURL != "" {
		tok, err := connectorToken(ctx, *mcpURL, *email)
		must(err)
		fmt.Println(tok)
		return
	}
	session, err := harness.SignIn(ctx, *api, *email)
	must(err)
	var pat struct {
		Token string `json:"token"`
	}
	must(postJSON(*api+"/auth/tokens", session, map[string]string{"name": "benchmark"}, &pat))
	fmt.Println(pat.Token)
}

var (
	resourceMetadataRe = regexp.MustCompile(`resource_metadata="([^"]+)"`)
	hiddenRe           = regexp.MustCompile(`name="(request|csrf)" value="([^"]+)"`)
)

// connectorToken plays an assistant's client and its user's browser
// through the authorization code flow for the connector at mcpURL.
func connectorToken(ctx context.Context, mcpURL, email string) (string, error) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// 1. The connector without a token: 401 naming its resource metadata.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	m := resourceMetadataRe.FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		return "", fmt.Errorf("connector: want 401 with resource_metadata, got %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := getJSON(m[1], &prm); err != nil {
		return "", err
	}
	if len(prm.AuthorizationServers) == 0 {
		return "", errors.New("protected resource metadata names no authorization server")
	}
	var as struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		RegistrationEndpoint  string `json:"registration_endpoint"`
	}
	if err := getJSON(strings.TrimRight(prm.AuthorizationServers[0], "/")+"/.well-known/oauth-authorization-server", &as); err != nil {
		return "", err
	}

	// 2. Dynamic registration of a native client.
	redirect := "http://127.0.0.1:40998/callback"
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := postJSON(as.RegistrationEndpoint, "", map[string]any{"client_name": "holdco benchmark", "redirect_uris": []string{redirect},
		"application_type": "native", "token_endpoint_auth_method": "none"}, &client); err != nil {
		return "", err
	}

	// 3. Authorize with PKCE; sign in at the identity provider; consent.
	verifier := harness.NewVerifier()
	q := url.Values{"client_id": {client.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"bench"},
		"code_challenge": {service.PKCEChallenge(verifier)}, "code_challenge_method": {"S256"}, "scope": {"nanocorp"}, "resource": {prm.Resource}}
	next := as.AuthorizationEndpoint + "?" + q.Encode()
	var code string
	for range 10 {
		resp, err := browser.Get(next)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK: // the consent page
			form := url.Values{"decision": {"allow"}}
			for _, f := range hiddenRe.FindAllStringSubmatch(string(body), 2) {
				form.Set(f[1], html.UnescapeString(f[2]))
			}
			if form.Get("request") == "" {
				return "", fmt.Errorf("authorize: a page without the consent form: %.300s", body)
			}
			u, _ := url.Parse(next)
			resp, err = browser.PostForm(u.Scheme+"://"+u.Host+"/oidc/consent", form)
			if err != nil {
				return "", err
			}
			resp.Body.Close()
		case resp.StatusCode/100 != 3:
			return "", fmt.Errorf("authorize: %s: %.300s", resp.Status, body)
		}
		loc, err := resp.Location()
		if err != nil {
			return "", fmt.Errorf("authorize: %s without a redirect", resp.Status)
		}
		switch {
		case strings.HasPrefix(loc.String(), redirect):
			if code = loc.Query().Get("code"); code == "" {
				return "", fmt.Errorf("authorize: refused: %s", loc.RawQuery)
			}
		case !strings.HasPrefix(loc.String(), strings.TrimRight(prm.AuthorizationServers[0], "/")+"/"):
			// The identity provider: sign in there, come back.
			back, err := devoidc.SignIn(ctx, loc.String(), email, harness.Password)
			if err != nil {
				return "", err
			}
			loc = back
		}
		if code != "" {
			break
		}
		next = loc.String()
	}
	if code == "" {
		return "", errors.New("authorize: no code after 10 redirects")
	}

	// 4. The code for a token.
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {client.ClientID},
		"code_verifier": {verifier}, "resource": {prm.Resource}}
	resp, err = http.PostForm(as.TokenEndpoint, form)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %s", resp.Status)
	}
	return tok.AccessToken, nil
}

func getJSON(u string, out any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func postJSON(u, bearer string, in, out any) error {
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s", (&url.URL{Path: u}).Path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
