package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"holdco/providers/devoidc"
	"holdco/scripts/internal/harness"
	"holdco/service"
)

var (
	resourceMetadataRe = regexp.MustCompile(`resource_metadata="([^"]+)"`)
	hiddenRe           = regexp.MustCompile(`name="(request|csrf)" value="([^"]+)"`)
)

// mcpHeaders are what the official clients send on protocol 2026-07-28.
func mcpRequest(ctx context.Context, mcpURL, token, method, name string, params map[string]any) (*http.Request, error) {
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

// connectorToken plays an assistant's client and its user's browser
// through the authorization code flow for the connector (the connector's
// 401, its resource metadata, the authorization server's metadata,
// dynamic registration, authorize with PKCE, sign-in, consent, token).
func connectorToken(ctx context.Context, mcpURL, email string) (string, error) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := mcpRequest(ctx, mcpURL, "", "tools/list", "", nil)
	if err != nil {
		return "", err
	}
	resp, err := harness.HTTP.Do(req)
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
	if err := harness.JSONCall("GET", m[1], "", nil, 200, &prm); err != nil {
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
	if err := harness.JSONCall("GET", issuer+"/.well-known/oauth-authorization-server", "", nil, 200, &as); err != nil {
		return "", err
	}
	redirect := "http://127.0.0.1:40998/callback"
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := harness.JSONCall("POST", as.RegistrationEndpoint, "", map[string]any{"client_name": "holdco scale test", "redirect_uris": []string{redirect},
		"application_type": "native", "token_endpoint_auth_method": "none"}, 201, &client); err != nil {
		return "", err
	}
	verifier := harness.NewVerifier()
	q := url.Values{"client_id": {client.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"scale"},
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

// callTool calls a connector tool and returns its structured or text
// result; a tool error (isError) is an error.
func callTool(ctx context.Context, mcpURL, token, tool string, args map[string]any) (string, error) {
	req, err := mcpRequest(ctx, mcpURL, token, "tools/call", tool, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("tools/call %s: %d: %.300s", tool, resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				data = []byte(strings.TrimSpace(d))
			}
		}
		b = data
	}
	var rpc struct {
		Error  *struct{ Message string } `json:"error"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil {
		return "", fmt.Errorf("tools/call %s: %w: %.300s", tool, err, b)
	}
	if rpc.Error != nil {
		return "", fmt.Errorf("tools/call %s: %s", tool, rpc.Error.Message)
	}
	var text strings.Builder
	for _, c := range rpc.Result.Content {
		text.WriteString(c.Text)
	}
	if rpc.Result.IsError {
		return "", fmt.Errorf("tools/call %s: tool error: %.300s", tool, text.String())
	}
	return text.String(), nil
}

// upload sends one file as a multipart form.
func upload(base, bearer, companyID, path string, content []byte) (int, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", path)
	_, _ = fw.Write(content)
	_ = mw.WriteField("path", path)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", base+"/companies/"+companyID+"/files", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// download follows a file's download redirect to its signed URL and
// returns the bytes.
func download(base, bearer, companyID, fileID string) ([]byte, error) {
	s, b := harness.CallRetry("GET", base+"/companies/"+companyID+"/files/"+fileID+"/download", bearer, nil, time.Minute)
	if s != http.StatusFound {
		return nil, fmt.Errorf("download link: %d: %.200s", s, b)
	}
	// The Location header: ask again to read it (call drops headers).
	req, _ := http.NewRequest("GET", base+"/companies/"+companyID+"/files/"+fileID+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("download: %d without Location", resp.StatusCode)
	}
	r2, err := http.Get(loc.String())
	if err != nil {
		return nil, err
	}
	defer r2.Body.Close()
	body, _ := io.ReadAll(r2.Body)
	if r2.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("signed URL answered %d: %.200s", r2.StatusCode, body)
	}
	return body, nil
}
