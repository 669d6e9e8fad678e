// Package devoidc is holdco's development OpenID Provider, built on
// zitadel/oidc's op package. The embedded default mounts it on the REST
// listener (issuer <public URL>/dev-idp) so browser and CLI sign-in work
// offline: local users sign up and sign in with an email and a password.
// Real deployments configure an external provider instead.
package devoidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is a local user of the provider. Its ID is the subject of the
// identity it asserts.
type User struct {
	ID, Email, Name string
}

// Errors of Users.
var (
	ErrUserNotFound = errors.New("devoidc: user not found")
	ErrEmailTaken   = errors.New("devoidc: email already registered")
)

// Users keeps the provider's local users (holdco keeps them in its
// database, so subjects survive restarts).
type Users interface {
	UserByEmail(ctx context.Context, email string) (User, []byte, error) // bcrypt hash
	UserByID(ctx context.Context, id string) (User, error)
	CreateUser(ctx context.Context, u User, passwordHash []byte) (User, error)
}

// Options configure the provider.
type Options struct {
	// Issuer is the provider's URL; Handler serves every path under its path.
	Issuer  string
	Clients []Client
	Users   Users
	Logger  *slog.Logger
	// CryptoKey encrypts codes and tokens (op.Config.CryptoKey).
	CryptoKey [32]byte
	// Attempts limits password attempts (StoredAttempts); nil limits
	// nothing.
	Attempts Attempts
	// State keeps sign-ins in progress, codes and access tokens
	// (StoredState: shared by every process); nil keeps them in this
	// process (MemoryState).
	State State
	// SigningKey signs ID tokens (P-256); every process serving the
	// issuer must have the same one. Nil makes one at start (a single
	// process: ID tokens are only verified during a sign-in).
	SigningKey *ecdsa.PrivateKey
}

// Provider is a running development OpenID Provider.
type Provider struct {
	prefix  string
	handler http.Handler
}

// New builds the provider. Several processes serve one issuer (behind a
// load balancer) when they share the clients, CryptoKey, SigningKey and a
// StoredState.
func New(_ context.Context, o Options) (*Provider, error) {
	u, err := url.Parse(o.Issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("devoidc: issuer %q is not a URL", o.Issuer)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	prefix := strings.TrimRight(u.Path, "/")
	key := o.SigningKey
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, fmt.Errorf("devoidc: signing key: %w", err)
		}
	} else if key.Curve != elliptic.P256() {
		return nil, errors.New("devoidc: the signing key must be a P-256 key")
	}
	if o.State == nil {
		o.State = NewMemoryState()
	}
	st := &storage{users: o.Users, state: o.State, key: key, keyID: keyID(key), clients: map[string]*client{}, now: time.Now}
	for _, c := range o.Clients {
		st.clients[c.ID] = &client{Client: c, loginPath: prefix + loginPath}
	}
	opts := []op.Option{op.WithLogger(o.Logger.With("component", "dev-idp"))}
	if u.Scheme == "http" {
		opts = append(opts, op.WithAllowInsecure())
	}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:      o.CryptoKey,
		CodeMethodS256: true,
		AuthMethodPost: true,
	}, st, op.StaticIssuer(o.Issuer), opts...)
	if err != nil {
		return nil, fmt.Errorf("devoidc: %w", err)
	}
	l := &login{storage: st, users: o.Users, attempts: o.Attempts, callback: op.AuthCallbackURL(provider), logger: o.Logger, formAction: formAction(o.Clients)}
	mux := http.NewServeMux()
	mux.Handle(prefix+loginPath, op.NewIssuerInterceptor(provider.IssuerFromRequest).Handler(l))
	mux.Handle(prefix+"/", http.StripPrefix(prefix, provider))
	return &Provider{prefix: prefix, handler: mux}, nil
}

// Handler serves the provider at the issuer's path (e.g. /dev-idp/…).
func (p *Provider) Handler() http.Handler { return p.handler }

// Prefix is the issuer's path, where Handler must be mounted.
func (p *Provider) Prefix() string { return p.prefix }

// keyID names a signing key after its public key, so every process
// sharing the key publishes the same id.
func keyID(key *ecdsa.PrivateKey) string {
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "devoidc"
	}
	sum := sha256.Sum256(pub)
	return "devoidc-" + hex.EncodeToString(sum[:6])
}

// NewSigningKey makes a signing key and returns it PKCS #8-encoded, the
// form ParseSigningKey reads (holdco keeps it as an instance secret).
func NewSigningKey() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return x509.MarshalPKCS8PrivateKey(key)
}

// ParseSigningKey reads a PKCS #8 P-256 key.
func ParseSigningKey(der []byte) (*ecdsa.PrivateKey, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("devoidc: signing key: %w", err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("devoidc: the signing key is not a P-256 key")
	}
	return key, nil
}

// formAction is the login form's CSP form-action: the provider itself and
// the origins of the clients' callbacks, which the form's submission ends
// at through redirects (browsers check those too; the authorization
// server's callback is on an origin of its own).
func formAction(clients []Client) string {
	out := "'self'"
	seen := map[string]bool{}
	for _, c := range clients {
		for _, r := range c.RedirectURIs {
			u, err := url.Parse(r)
			if err != nil || u.Host == "" || seen[u.Scheme+"://"+u.Host] {
				continue
			}
			seen[u.Scheme+"://"+u.Host] = true
			out += " " + u.Scheme + "://" + u.Host
		}
	}
	return out
}
