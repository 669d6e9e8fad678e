// Command benchtoken signs a local user in to a running holdco (embedded
// development identity provider), the way `holdco login` does, and prints a
// new personal access token: the credential of the authenticated load run.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"

	"holdco/providers/devoidc"
	"holdco/service"
)

func main() {
	api := flag.String("api", "http://127.0.0.1:8080", "holdco REST address")
	email := flag.String("email", "bench@example.com", "local user")
	flag.Parse()
	ctx := context.Background()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier := base64.RawURLEncoding.EncodeToString(b)

	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	must(getJSON(*api+"/auth/cli/start?port=40999&code_challenge="+service.PKCEChallenge(verifier), &start))
	back, err := devoidc.SignIn(ctx, start.AuthorizationURL, *email, "benchmark-password")
	must(err)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(back.String())
	must(err)
	loopback, err := resp.Location()
	must(err)
	var grant struct {
		AccessToken string `json:"access_token"`
	}
	must(postJSON(*api+"/auth/cli/token", "", map[string]string{"code": loopback.Query().Get("code"), "code_verifier": verifier}, &grant))
	var pat struct {
		Token string `json:"token"`
	}
	must(postJSON(*api+"/auth/tokens", grant.AccessToken, map[string]string{"name": "benchmark"}, &pat))
	fmt.Println(pat.Token)
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
