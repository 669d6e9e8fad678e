package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"holdco/providers/devoidc"
	"holdco/service"
)

var (
	resourceMetadataRe = regexp.MustCompile(`resource_metadata="([^"]+)"`)
	hiddenRe           = regexp.MustCompile(`name="(request|csrf)" value="([^"]+)"`)
)

// MCPRequest is a JSON-RPC request to the connector at mcpURL with the
// headers the official clients send on protocol 2026-07-28 (token may be
// empty; name is the Mcp-Name header, if any).
func MCPRequest(ctx context.Context, mcpURL, token, method, name string, params map[string]any) (*http.Request, error) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// ConnectorToken plays an assistant's client and its user's browser
// through the authorization code flow for the connector (the connector's
// 401, its resource metadata, the authorization server's metadata,
// dynamic registration, authorize with PKCE, sign-in, consent, token).
// clientName is the name the client registers under.
func ConnectorToken(ctx context.Context, mcpURL, email, clientName string) (string, error) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := MCPRequest(ctx, mcpURL, "", "tools/list", "", nil)
	if err != nil {
		return "", err
	}
	resp, err := HTTP.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	m := resourceMetadataRe.FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		return "", fmt.Errorf("connector: want 401 with resource_metadata, got %s", resp.Status)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := JSONCall("GET", m[1], "", nil, 200, &prm); err != nil {
		return "", err
	}
	if len(prm.AuthorizationServers) == 0 {
		return "", errors.New("protected resource metadata names no authorization server")
	}
	issuer := strings.TrimRight(prm.AuthorizationServers[0], "/")
	var as struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		RegistrationEndpoint  string `json:"registration_endpoint"`
	}
	if err := JSONCall("GET", issuer+"/.well-known/oauth-authorization-server", "", nil, 200, &as); err != nil {
		return "", err
	}
	redirect := "http://127.0.0.1:40998/callback"
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := JSONCall("POST", as.RegistrationEndpoint, "", map[string]any{"client_name": clientName, "redirect_uris": []string{redirect},
		"application_type": "native", "token_endpoint_auth_method": "none"}, 201, &client); err != nil {
		return "", err
	}
	verifier := NewVerifier()
	q := url.Values{"client_id": {client.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"harness"},
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
			resp, err = browser.PostForm(issuer+"/oidc/consent", form)
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
		case !strings.HasPrefix(loc.String(), issuer+"/"):
			back, err := devoidc.SignIn(ctx, loc.String(), email, Password)
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
