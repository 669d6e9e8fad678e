package devoidc

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

const (
	loginPath         = "/login"
	minPasswordLength = 8
	maxNameLength     = 200 // the stored columns' sizes
	maxEmailLength    = 320
)

// login is the provider's sign-in form. An unknown email signs up (the
// password becomes the account's); a known one must give its password.
// The form is tied to an unguessable, short-lived auth request id, which
// is what a forged POST would lack.
type login struct {
	storage  *storage
	users    Users
	attempts Attempts
	callback func(context.Context, string) string
	logger   *slog.Logger
	// formAction is the CSP form-action (see formAction).
	formAction string
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>holdco development sign-in</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}
label{display:block;margin:.8rem 0}input{width:100%;padding:.4rem;font-size:1rem}button{margin-top:1rem;font-size:1rem;padding:.5rem 1.2rem}
.error{color:#a00}.note{color:#555;font-size:.9rem}</style></head><body>
<h1>Sign in to holdco</h1>
<p class="note">Development identity provider. A new email address creates a local account with the password you choose (at least 8 characters).</p>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
<form method="post">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<label>Email <input type="email" name="email" value="{{.Email}}" required autofocus></label>
<label>Password <input type="password" name="password" required minlength="8"></label>
<label>Name (new accounts) <input name="name" value="{{.Name}}"></label>
<button>Continue</button>
</form></body></html>`))

type loginData struct{ ID, Email, Name, Error string }

func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+l.formAction+"; frame-ancestors 'none'")
	switch r.Method {
	case http.MethodGet:
		id := r.URL.Query().Get("authRequestID")
		if _, err := l.storage.AuthRequestByID(r.Context(), id); err != nil {
			l.requestGone(w, r, err)
			return
		}
		l.render(w, http.StatusOK, loginData{ID: id})
	case http.MethodPost:
		l.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (l *login) render(w http.ResponseWriter, status int, d loginData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, d)
}

func (l *login) submit(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed form", http.StatusBadRequest)
		return
	}
	d := loginData{ID: r.PostForm.Get("authRequestID"), Email: strings.TrimSpace(r.PostForm.Get("email")), Name: strings.TrimSpace(r.PostForm.Get("name"))}
	password := r.PostForm.Get("password")
	if _, err := l.storage.AuthRequestByID(r.Context(), d.ID); err != nil {
		l.requestGone(w, r, err)
		return
	}
	if msg := formTextProblem(d.Email, d.Name, password); msg != "" {
		d.Error = msg
		l.render(w, http.StatusUnprocessableEntity, sanitizeForm(d))
		return
	}
	if utf8.RuneCountInString(d.Name) > maxNameLength || len(d.Email) > maxEmailLength {
		d.Error = "Use an email address of at most 320 characters and a name of at most 200."
		l.render(w, http.StatusUnprocessableEntity, loginData{ID: d.ID, Error: d.Error})
		return
	}
	addr, err := mail.ParseAddress(d.Email)
	if err != nil || addr.Address != d.Email {
		d.Error = "Enter a valid email address."
		l.render(w, http.StatusUnprocessableEntity, d)
		return
	}
	if l.attempts != nil {
		wait, err := l.attempts.Attempt(r.Context(), peerAddr(r), strings.ToLower(d.Email))
		if err != nil {
			l.logger.ErrorContext(r.Context(), "dev-idp: count attempt", "error", err)
			d.Error = "Sign-in is unavailable; try again."
			l.render(w, http.StatusInternalServerError, d)
			return
		}
		if wait > 0 {
			secs := int64(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			d.Error = fmt.Sprintf("Too many sign-in attempts; wait %s and try again.", waitText(secs))
			l.render(w, http.StatusTooManyRequests, d)
			return
		}
	}
	user, err := l.authenticate(r.Context(), d, password)
	if errors.Is(err, errBadLogin) && l.attempts != nil {
		if err := l.attempts.WrongPassword(r.Context(), strings.ToLower(d.Email)); err != nil {
			l.logger.ErrorContext(r.Context(), "dev-idp: count wrong password", "error", err)
		}
	}
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		d.Error = refused.msg
		l.render(w, refused.status, d)
		return
	case err != nil:
		// A store failure: logged (without the form's values), never shown.
		l.logger.ErrorContext(r.Context(), "dev-idp: sign in", "error", err)
		d.Error = "Sign-in is unavailable; try again."
		l.render(w, http.StatusInternalServerError, d)
		return
	}
	if err := l.storage.completeLogin(r.Context(), d.ID, user.ID); err != nil {
		l.requestGone(w, r, err)
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), d.ID), http.StatusFound)
}

// requestGone answers a sign-in that cannot be read: expired or unknown
// (400, start again), or a store failure (500, logged).
func (l *login) requestGone(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errNotFound) {
		http.Error(w, "This sign-in link expired; start again from the application.", http.StatusBadRequest)
		return
	}
	l.logger.ErrorContext(r.Context(), "dev-idp: read sign-in", "error", err)
	http.Error(w, "Sign-in is unavailable; try again.", http.StatusInternalServerError)
}

// refusal is a sign-in refused because of what was typed; its message is
// shown on the form.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// errBadLogin is shown for any wrong email/password pair.
var errBadLogin = &refusal{http.StatusUnauthorized, "Wrong email or password."}

// formTextProblem refuses what no stored text may hold: invalid UTF-8 and
// NUL anywhere, and any control character in the single-line email and
// name.
func formTextProblem(email, name, password string) string {
	for _, f := range []struct {
		label, value string
		singleLine   bool
	}{{"email", email, true}, {"name", name, true}, {"password", password, false}} {
		if !utf8.ValidString(f.value) || strings.ContainsRune(f.value, 0) {
			return "The " + f.label + " contains characters that are not allowed (such as NUL)."
		}
		if f.singleLine && strings.IndexFunc(f.value, unicode.IsControl) >= 0 {
			return "The " + f.label + " must be one line of text without control characters."
		}
	}
	return ""
}

// sanitizeForm drops refused values from the form shown again.
func sanitizeForm(d loginData) loginData {
	if formTextProblem(d.Email, "", "") != "" {
		d.Email = ""
	}
	if formTextProblem("", d.Name, "") != "" {
		d.Name = ""
	}
	return d
}

func (l *login) authenticate(ctx context.Context, d loginData, password string) (User, error) {
	email := strings.ToLower(d.Email)
	user, hash, err := l.users.UserByEmail(ctx, email)
	if errors.Is(err, ErrUserNotFound) {
		if len(password) < minPasswordLength {
			return User{}, &refusal{http.StatusUnauthorized, "Choose a password of at least 8 characters."}
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if errors.Is(err, bcrypt.ErrPasswordTooLong) {
			return User{}, &refusal{http.StatusUnprocessableEntity, "Choose a password of at most 72 bytes."}
		}
		if err != nil {
			return User{}, err
		}
		name := d.Name
		if name == "" {
			name, _, _ = strings.Cut(email, "@")
		}
		u, err := l.users.CreateUser(ctx, User{Email: email, Name: name}, hash)
		if errors.Is(err, ErrEmailTaken) {
			return User{}, errBadLogin // a concurrent sign-up won
		}
		return u, err
	}
	if err != nil {
		return User{}, err
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return User{}, errBadLogin
	}
	return user, nil
}

// peerAddr is the address of the form's client (the peer: the provider
// is for development, behind no proxy).
func peerAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func waitText(secs int64) string {
	if secs < 120 {
		return fmt.Sprintf("%d seconds", secs)
	}
	return fmt.Sprintf("%d minutes", (secs+59)/60)
}
