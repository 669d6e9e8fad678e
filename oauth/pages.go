package oauth

import (
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	authz "holdco/service/oauth"
)

const pageStyle = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}.muted{color:#555;font-size:.9rem}.badge{display:inline-block;padding:.1rem .5rem;border-radius:.6rem;font-size:.8rem}
.verified{background:#d9f2df;color:#135c27}.unverified{background:#fde9c8;color:#7a4a00}
.box{border:1px solid #ddd;border-radius:.5rem;padding:.8rem 1rem;margin:1rem 0}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font-size:1rem;padding:.55rem 1.4rem;border-radius:.4rem;border:1px solid #888;background:#fff;cursor:pointer}
button.allow{background:#1a5fd0;color:#fff;border-color:#1a5fd0}.link{border:none;background:none;color:#1a5fd0;padding:0;font-size:.9rem;text-decoration:underline}
code{word-break:break-all}`

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Allow {{.Name}} to use your holdco account?</title>
<style>` + pageStyle + `</style></head><body>
<h1>Allow <span id="client-name">{{.Name}}</span> to use your holdco account?</h1>
<p>{{if .Verified}}<span class="badge verified" id="client-status">Registered with holdco</span>{{else}}<span class="badge unverified" id="client-status">Not verified</span>
<span class="muted">holdco has not checked who runs this assistant{{if .ClientHost}}; it describes itself at <code>{{.ClientHost}}</code>{{end}}.</span>{{end}}</p>
<div class="box">
<p id="receiver">Access will be sent to {{if .LoopbackPort}}<strong>this computer, port {{.LoopbackPort}}</strong> (an app running on your device){{else}}<strong><code>{{.ReceiverOrigin}}</code></strong>{{end}}.</p>
<p class="muted"><code>{{.RedirectURI}}</code></p>
</div>
<p id="capability">{{.Name}} will be able to act as you across all your businesses: create businesses, send messages to their agents (which spends your credits), read and change their documents, files, tasks, products and sites, and use every tool your agents have. It cannot see your password or change your payment details. You can disconnect it at any time from your account.</p>
<div class="box"><p id="account">Signed in as <strong>{{.Email}}</strong>.</p>
<form method="post" action="/oidc/switch"><input type="hidden" name="request" value="{{.Request}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button class="link" id="switch" type="submit">Not you? Switch account</button></form></div>
<form method="post" action="/oidc/consent"><input type="hidden" name="request" value="{{.Request}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="actions"><button class="allow" id="allow" name="decision" value="allow" type="submit">Allow</button>
<button id="deny" name="decision" value="deny" type="submit">Deny</button></div></form>
</body></html>`))

type consentData struct {
	Name, ClientHost, ReceiverOrigin, RedirectURI, LoopbackPort, Email, Request, CSRF string
	Verified                                                                          bool
}

var messagePage = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">{{if .Refresh}}<meta http-equiv="refresh" content="0;url={{.Refresh}}">{{end}}<title>{{.Title}}</title>
<style>` + pageStyle + `</style></head><body>
<h1 id="title">{{.Title}}</h1>
<p id="message">{{.Message}}</p>
{{if .Code}}<p class="muted">Error: <code id="error-code">{{.Code}}</code></p>{{end}}
{{if .Refresh}}<p><a href="{{.Refresh}}">Continue</a></p>{{end}}
</body></html>`))

type messageData struct {
	Title, Message, Code string
	Refresh              string
}

// pageHeaders are the headers of every HTML page: no caching, no framing,
// no scripts, forms only to formAction.
func pageHeaders(w http.ResponseWriter, formAction string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action "+formAction)
}

func renderMessage(w http.ResponseWriter, status int, d messageData) {
	pageHeaders(w, "'none'")
	w.WriteHeader(status)
	_ = messagePage.Execute(w, d)
}

// origin is the scheme://host[:port] of a URL, for the receiver line and
// the CSP's form-action (the redirect after Allow is checked against it).
// The host is in ASCII (punycode): exаmple.com with a Cyrillic а shows as
// xn--exmple-4nf.com, not as a look-alike of example.com.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + asciiHost(u.Host)
}

// asciiURL is raw with its host in ASCII (punycode), for display.
func asciiURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Host = asciiHost(u.Host)
	return u.String()
}

// asciiHost converts host[:port] to ASCII: IDNA (punycode) for an
// internationalized name, and \u escapes for what IDNA refuses, so a page
// never shows a non-ASCII host.
func asciiHost(hostport string) string {
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil && !strings.HasPrefix(hostport, "[") {
		host, port = h, p
	}
	ascii := host
	if !isASCII(host) {
		if a, err := idna.Lookup.ToASCII(host); err == nil && isASCII(a) {
			ascii = a
		} else {
			q := strconv.QuoteToASCII(host)
			ascii = q[1 : len(q)-1]
		}
	}
	if port != "" {
		return ascii + ":" + port
	}
	return ascii
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// visibleName shows a client name with any invisible or text-direction
// character spelled out (U+200B), for names stored before registration
// refused them.
func visibleName(name string) string {
	if _, hidden := authz.HiddenRune(name); !hidden {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if _, h := authz.HiddenRune(string(r)); h {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
