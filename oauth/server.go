// Package oauth is the authorization server's HTTP adapter (the oauth
// role's listener, an origin of its own): discovery, registration, the
// authorization endpoint with sign-in and the consent page, the token and
// revocation endpoints. It parses, calls service/oauth and renders; every
// rule lives there.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"holdco/models"
	authz "holdco/service/oauth"
)

// Deps are the adapter's dependencies.
type Deps struct {
	Service *authz.Service
	Logger  *slog.Logger
	// Health answers GET /health.
	Health http.Handler
	// Secure marks the session cookie Secure (the issuer is https).
	Secure bool
	// Limits override DefaultLimits (nil: the defaults).
	Limits *Limits
}

// Body limits: a registration is a small JSON object; forms are smaller
// still, except the consent form that carries the sealed request.
const (
	maxRegisterBody = 64 << 10
	maxFormBody     = 64 << 10
)

type server struct {
	svc    *authz.Service
	logger *slog.Logger
	secure bool

	limits Limits
}

// New returns the authorization server's handler.
func New(d Deps) http.Handler {
	lim := DefaultLimits
	if d.Limits != nil {
		lim = *d.Limits
	}
	logger := d.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &server{svc: d.Service, logger: logger, secure: d.Secure, limits: lim}
	mux := http.NewServeMux()
	if d.Health != nil {
		mux.Handle("GET /health", d.Health)
	}
	mux.HandleFunc("GET "+authz.MetadataPath, s.metadata)
	mux.HandleFunc("POST "+authz.RegisterPath, s.registerClient)
	mux.HandleFunc("GET "+authz.AuthorizePath, s.authorize)
	mux.HandleFunc("POST "+authz.ConsentPath, s.consent)
	mux.HandleFunc("POST "+authz.SwitchPath, s.switchAccount)
	mux.HandleFunc("GET "+authz.CallbackPath, s.callback)
	mux.HandleFunc("POST "+authz.TokenPath, s.token)
	mux.HandleFunc("POST "+authz.RevokePath, s.revoke)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": string(models.CodeNotFound), "detail": "No route matches " + r.Method + " " + r.URL.Path + "."})
	})
	return cors(mux)
}

// cors lets browser-based clients call the JSON endpoints: they carry no
// cookie, so any origin may.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case authz.MetadataPath, authz.RegisterPath, authz.TokenPath, authz.RevokePath:
			w.Header().Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
				w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, DPoP")
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) metadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, s.svc.Metadata())
}

// clientAddr is the peer's address (a proxy in front should be the only
// peer; X-Forwarded-For is not trusted).
func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func (s *server) registerClient(w http.ResponseWriter, r *http.Request) {
	if !s.admit(w, r, authz.LimitRegisterPerAddr, s.limits.RegisterPerAddr, clientAddr(r), false) {
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.oauthFailed(w, r, &authz.Error{Code: authz.ErrInvalidClientMetadata, Description: "Send the client metadata as application/json.", Status: http.StatusBadRequest})
		return
	}
	var md authz.Metadata
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegisterBody))
	if err := dec.Decode(&md); err != nil {
		desc := "The body is not a JSON object of client metadata (redirect_uris an array of strings, client_name a string, …)."
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			desc = "The registration is larger than 64 KB."
		}
		s.oauthFailed(w, r, &authz.Error{Code: authz.ErrInvalidClientMetadata, Description: desc, Status: http.StatusBadRequest})
		return
	}
	reg, err := s.svc.Register(r.Context(), md)
	if err != nil {
		s.oauthFailed(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, reg)
}

// readForm parses a POST form body (and nothing from the query), refusing
// a repeated parameter.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *authz.Error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, &authz.Error{Code: authz.ErrInvalidRequest, Description: "Send the parameters as application/x-www-form-urlencoded.", Status: http.StatusBadRequest}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBody))
	if err != nil {
		return nil, &authz.Error{Code: authz.ErrInvalidRequest, Description: "The form is too large.", Status: http.StatusBadRequest}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, &authz.Error{Code: authz.ErrInvalidRequest, Description: "The form is malformed.", Status: http.StatusBadRequest}
	}
	for k, v := range form {
		if len(v) > 1 {
			return nil, &authz.Error{Code: authz.ErrInvalidRequest, Description: k + " appears more than once.", Status: http.StatusBadRequest}
		}
	}
	return form, nil
}

func hasBasic(r *http.Request) bool {
	return strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "basic ")
}

// clientForm is the shared start of the token and revocation endpoints:
// no caching, the per-address limit, the form, and whether it carried a
// client_secret. A failure is answered.
func (s *server) clientForm(w http.ResponseWriter, r *http.Request) (form url.Values, secret, ok bool) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if !s.admit(w, r, authz.LimitTokenPerAddr, s.limits.TokenPerAddr, clientAddr(r), false) {
		return nil, false, false
	}
	form, ferr := readForm(w, r)
	if ferr != nil {
		s.oauthFailed(w, r, ferr)
		return nil, false, false
	}
	_, secret = form["client_secret"]
	return form, secret, true
}

func (s *server) token(w http.ResponseWriter, r *http.Request) {
	form, secret, ok := s.clientForm(w, r)
	if !ok {
		return
	}
	if id := form.Get("client_id"); id != "" && !s.admit(w, r, authz.LimitTokenPerClient, s.limits.TokenPerClient, id, false) {
		return
	}
	resp, err := s.svc.Exchange(r.Context(), authz.TokenRequest{GrantType: form.Get("grant_type"), Code: form.Get("code"),
		RedirectURI: form.Get("redirect_uri"), ClientID: form.Get("client_id"), CodeVerifier: form.Get("code_verifier"),
		Resource: form.Get("resource"), BasicAuth: hasBasic(r), ClientSecret: secret})
	if err != nil {
		s.oauthFailed(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *server) revoke(w http.ResponseWriter, r *http.Request) {
	form, secret, ok := s.clientForm(w, r)
	if !ok {
		return
	}
	if err := s.svc.Revoke(r.Context(), form.Get("token"), form.Get("client_id"), hasBasic(r), secret); err != nil {
		s.oauthFailed(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// oauthFailed writes an OAuth error as JSON ({error, error_description});
// anything else is a server_error, logged.
func (s *server) oauthFailed(w http.ResponseWriter, r *http.Request, err error) {
	var oe *authz.Error
	if !errors.As(err, &oe) {
		s.logger.ErrorContext(r.Context(), "oauth: request failed", "path", r.URL.Path, "error", err)
		oe = &authz.Error{Code: authz.ErrServerError, Description: "The authorization server failed; retry shortly.", Status: http.StatusInternalServerError}
	}
	writeJSON(w, oe.Status, map[string]string{"error": oe.Code, "error_description": oe.Description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ctxTimeout bounds the work of one browser request.
func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 30*time.Second)
}
