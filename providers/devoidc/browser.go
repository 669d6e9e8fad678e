package devoidc

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
)

// SignIn plays a browser through a sign-in at this provider: it opens
// authURL, submits the login form with email and password, and follows
// redirects until one leaves the provider (prefix), which it returns
// without following: that is the client's redirect URI with code and state,
// or an error redirect. Integration tests and scripts use it; the provider
// does not.
func SignIn(ctx context.Context, authURL, email, password string) (*url.URL, error) {
	return SignInForm(ctx, authURL, url.Values{"email": {email}, "password": {password}})
}

// SignInForm is SignIn with every field of the login form given (email,
// password, name).
func SignInForm(ctx context.Context, authURL string, fields url.Values) (*url.URL, error) {
	start, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	root := providerRoot(start.Path)
	inside := func(u *url.URL) bool { return u.Host == start.Host && strings.HasPrefix(u.Path, root+"/") }
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// follow walks the provider's redirects; it stops at its login form
	// (returned as form) or at the first address outside it (out).
	follow := func(next *url.URL) (form, out *url.URL, err error) {
		for range 10 {
			resp, err := get(ctx, c, next.String())
			if err != nil {
				return nil, nil, err
			}
			if resp.StatusCode == http.StatusOK && strings.HasSuffix(next.Path, loginPath) {
				return next, nil, nil
			}
			loc, err := resp.Location()
			if err != nil {
				return nil, nil, fmt.Errorf("devoidc: %s answered %d without a redirect", next, resp.StatusCode)
			}
			if !inside(loc) {
				return nil, loc, nil
			}
			next = loc
		}
		return nil, nil, fmt.Errorf("devoidc: too many redirects")
	}
	form, out, err := follow(start)
	if err != nil || out != nil {
		return out, err
	}
	values := url.Values{"authRequestID": {form.Query().Get("authRequestID")}}
	for k, v := range fields {
		values[k] = v
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, form.String(), strings.NewReader(values.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc, err := resp.Location()
	if resp.StatusCode != http.StatusFound || err != nil {
		return nil, fmt.Errorf("devoidc: login refused (%d): %s", resp.StatusCode, pageError(string(body)))
	}
	if !inside(loc) {
		return loc, nil
	}
	_, out, err = follow(loc)
	return out, err
}

// providerRoot is the issuer path of an authorize URL (…/dev-idp/authorize).
func providerRoot(authorizePath string) string {
	i := strings.LastIndex(strings.TrimSuffix(authorizePath, "/"), "/")
	if i <= 0 {
		return "/"
	}
	return authorizePath[:i]
}

func get(ctx context.Context, c *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

// pageError is the error paragraph of the login page, or its first line.
func pageError(page string) string {
	if _, rest, ok := strings.Cut(page, `<p class="error">`); ok {
		msg, _, _ := strings.Cut(rest, "</p>")
		return html.UnescapeString(msg)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(page), "\n")
	return line
}
