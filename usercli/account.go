package usercli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"
	"time"
)

// signedIn returns the stored credentials and the API address.
func (e Env) signedIn(apiFlag string) (Credentials, string, error) {
	c, err := e.loadCredentials()
	if err != nil {
		return c, "", err
	}
	return c, e.apiURL(apiFlag), nil
}

// Logout revokes the session key on the server and removes it locally
// (also when the server cannot be reached, which is reported).
func Logout(ctx context.Context, e Env, args []string) error {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	api := fs.String("api", "", "holdco REST address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, base, err := e.signedIn(*api)
	if errors.Is(err, errNotSignedIn) {
		fmt.Fprintln(e.Stdout, "Not signed in.")
		return nil
	}
	if err != nil {
		return err
	}
	_, revokeErr := e.call(ctx, http.MethodPost, base+"/auth/cli/logout", c.AccessToken, nil, nil)
	path, err := e.credentialsPath()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if revokeErr != nil && !errors.Is(revokeErr, errNotSignedIn) {
		return fmt.Errorf("signed out locally, but the server did not revoke the session: %w", revokeErr)
	}
	fmt.Fprintln(e.Stdout, "Signed out.")
	return nil
}

// Whoami prints who the stored credential is.
func Whoami(ctx context.Context, e Env, args []string) error {
	fs := flag.NewFlagSet("whoami", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	api := fs.String("api", "", "holdco REST address")
	asJSON := fs.Bool("json", false, "print the raw answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, base, err := e.signedIn(*api)
	if err != nil {
		return err
	}
	var me map[string]any
	if _, err := e.call(ctx, http.MethodGet, base+"/auth/me", c.AccessToken, nil, &me); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(me)
	}
	if u, ok := me["user"].(map[string]any); ok {
		fmt.Fprintf(e.Stdout, "%v (%v) — %v, conglomerate %v\n", u["email"], u["name"], me["credential"], me["conglomerate_id"])
		return nil
	}
	fmt.Fprintf(e.Stdout, "%v — %v\n", me["kind"], me["credential"])
	return nil
}

type token struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	Token      string     `json:"token,omitempty"`
}

// Tokens lists, creates and revokes personal access tokens.
func Tokens(ctx context.Context, e Env, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: holdco tokens list | create --name NAME [--expires-in-days N] | revoke ID")
	}
	fs := flag.NewFlagSet("tokens "+args[0], flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	api := fs.String("api", "", "holdco REST address")
	asJSON := fs.Bool("json", false, "print the raw answer")
	name := fs.String("name", "", "what the token is for")
	days := fs.Int("expires-in-days", 0, "lifetime in days (1–365); 0 never expires")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	c, base, err := e.signedIn(*api)
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		var list []token
		if _, err := e.call(ctx, http.MethodGet, base+"/auth/tokens", c.AccessToken, nil, &list); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(list)
		}
		w := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tNAME\tCREATED\tLAST USED\tEXPIRES")
		for _, t := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.CreatedAt.Format(time.DateOnly), orNever(t.LastUsedAt), orNever(t.ExpiresAt))
		}
		return w.Flush()
	case "create":
		body := map[string]any{"name": *name}
		if *days != 0 {
			body["expires_in_days"] = *days
		}
		var t token
		if _, err := e.call(ctx, http.MethodPost, base+"/auth/tokens", c.AccessToken, body, &t); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(t)
		}
		fmt.Fprintf(e.Stdout, "%s\n", t.Token)
		fmt.Fprintf(e.Stderr, "Token %q (%s) created. It is shown only this once.\n", t.Name, t.ID)
		return nil
	case "revoke":
		if fs.NArg() != 1 {
			return errors.New("usage: holdco tokens revoke ID")
		}
		if _, err := e.call(ctx, http.MethodDelete, base+"/auth/tokens/"+fs.Arg(0), c.AccessToken, nil, nil); err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, "Revoked.")
		return nil
	}
	return fmt.Errorf("unknown tokens command %q", args[0])
}

func orNever(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.DateOnly)
}
