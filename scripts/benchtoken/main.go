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
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"

	"holdco/scripts/internal/harness"
)

func main() {
	api := flag.String("api", "http://127.0.0.1:8080", "holdco REST address")
	mcpURL := flag.String("mcp", "", "the connector's address: print an OAuth access token for it instead of a personal access token")
	email := flag.String("email", "bench@example.com", "local user")
	flag.Parse()
	ctx := context.Background()
	if *mcpURL != "" {
		tok, err := harness.ConnectorToken(ctx, *mcpURL, *email, "holdco benchmark")
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
