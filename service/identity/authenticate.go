package identity

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Service is the identity use cases: authentication of every credential
// kind, sign-in (web, CLI loopback, device flow), tokens and the account.
type Service struct {
	cfg         service.Config
	store       *store.Store
	idp         IdentityProvider
	logger      *slog.Logger
	now         func() time.Time
	sign        service.Signer
	payments    AccountPayments
	sales       CompanySales
	core        *service.Core
	userKeys    *service.Cache[string, *service.Principal] // by token hash
	sessions    *service.Cache[string, *service.Principal] // by web session id
	adminKeys   *service.Cache[string, *service.Principal] // by token hash
	companyKeys *service.Cache[string, *service.Principal] // by key hash (shared with companies)
}

// IdentityProvider is the upstream OpenID Connect provider users sign in
// with (providers/oidcrp).
type IdentityProvider interface {
	Issuer() string
	AuthURL(ctx context.Context, redirectURI, state, challenge string, params map[string]string) (string, error)
	Exchange(ctx context.Context, redirectURI, code, verifier string) (models.Identity, error)
	EndSessionURL(ctx context.Context, redirectURI, postLogoutRedirect string) string
}

// AccountPayments stops an account's payments before it is deleted
// (billing.Service).
type AccountPayments interface {
	StopAccountPayments(ctx context.Context, owned []models.Conglomerate) error
}

// CompanySales stops what a company sells on its conglomerate's connected
// account before its account is deleted (sales.Service, as archiving
// does).
type CompanySales interface {
	StopCompanySales(ctx context.Context, sc store.CompanyScope) error
}

// New builds the identity use cases on core. idp may be nil where no one
// signs in, and payments and sales where no account is deleted (admin
// commands).
func New(core *service.Core, idp IdentityProvider, payments AccountPayments, sales CompanySales) *Service {
	now := core.Clock()
	return &Service{cfg: core.Config(), store: core.Store(), idp: idp, logger: core.Logger(), now: now, sign: core.Signer(),
		payments: payments, sales: sales, core: core,
		userKeys:    core.PrincipalCache(service.CacheMaxEntries),
		sessions:    core.PrincipalCache(service.CacheMaxEntries),
		adminKeys:   core.PrincipalCache(1000),
		companyKeys: core.CompanyKeys()}
}

// Web session JWTs live this long; the server-side record can end them
// sooner (logout, account deletion).
const WebSessionTTL = 30 * 24 * time.Hour

func errBadCredential() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "The bearer credential is invalid, expired or revoked.")
}

type webClaims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid"`
}

// pageSessionPrefix starts the SSO cookie's value. It is no credential
// prefix of the REST API: Authenticate never accepts a page session.
const pageSessionPrefix = "holdco_page_"

// issuePageSession records a session of holdco's own pages for the user
// and returns the cookie's value (an opaque id; only its hash is stored).
// It lives as long as a web session and ends with the user's other web
// sessions (logout, account deletion).
func (s *Service) issuePageSession(ctx context.Context, userID string) (string, error) {
	raw, hash := service.NewCredential(pageSessionPrefix)
	sess := models.WebSession{UserID: userID, ExpiresAt: s.now().Add(WebSessionTTL), CookieHash: &hash}
	if err := s.store.Identity().CreateWebSession(ctx, &sess); err != nil {
		return "", err
	}
	return raw, nil
}

// issueWebSessionUntil is issueWebSession that also tells when the token
// expires.
func (s *Service) issueWebSessionUntil(ctx context.Context, userID string) (string, time.Time, error) {
	now := s.now()
	sess := models.WebSession{UserID: userID, ExpiresAt: now.Add(WebSessionTTL)}
	if err := s.store.Identity().CreateWebSession(ctx, &sess); err != nil {
		return "", time.Time{}, err
	}
	claims := webClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.cfg.PublicURL,
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(sess.ExpiresAt),
		},
		SessionID: sess.ID,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.jwtKey())
	return tok, sess.ExpiresAt, err
}

func (s *Service) jwtKey() []byte { return []byte(s.sign.Derive("jwt", "web-session")) }

// parseWebJWT verifies signature, issuer and (unless allowExpired) expiry.
func (s *Service) parseWebJWT(raw string, allowExpired bool) (webClaims, error) {
	var claims webClaims
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(s.cfg.PublicURL), jwt.WithTimeFunc(s.now)}
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return s.jwtKey(), nil }, opts...)
	if err != nil && !(allowExpired && errors.Is(err, jwt.ErrTokenExpired)) {
		return claims, err
	}
	if claims.Subject == "" || claims.SessionID == "" {
		return claims, errors.New("web session token lacks sub or sid")
	}
	return claims, nil
}

// Authenticate resolves a bearer credential of any kind to a principal.
// Wrong, expired or revoked credentials are unauthenticated.
func (s *Service) Authenticate(ctx context.Context, bearer string) (service.Principal, error) {
	p, err := s.AuthenticateRef(ctx, bearer)
	if err != nil {
		return service.Principal{}, err
	}
	return *p, nil
}

// AuthenticateRef is Authenticate answering the cached principal itself
// (shared: never modify it), for service.WithPrincipalRef. Each resolved
// credential is cached with its user's and account's rows for
// service.CredentialCacheTTL, so a request with a known credential reads
// nothing from the database.
func (s *Service) AuthenticateRef(ctx context.Context, bearer string) (*service.Principal, error) {
	bearer = strings.TrimSpace(bearer)
	if bearer == "" {
		return nil, service.ErrUnauthenticated()
	}
	switch service.CredentialPrefix(bearer) {
	case service.PrefixUserKey:
		return s.authenticateUserKey(ctx, bearer)
	case service.PrefixCompanyKey:
		return s.authenticateCompanyKey(ctx, bearer)
	case service.PrefixAdminToken:
		return s.authenticateAdmin(ctx, bearer)
	}
	return s.authenticateWebJWT(ctx, bearer)
}

func (s *Service) authenticateWebJWT(ctx context.Context, raw string) (*service.Principal, error) {
	claims, err := s.parseWebJWT(raw, false)
	if err != nil {
		return nil, errBadCredential()
	}
	if p, ok := s.sessions.Get(claims.SessionID); ok {
		if p == nil || p.UserID != claims.Subject {
			return nil, errBadCredential() // cached: ended session
		}
		return p, nil
	}
	sess, err := s.store.Identity().GetWebSession(ctx, claims.SessionID)
	// A page session (the SSO cookie's) never authenticates a bearer.
	if errors.Is(err, models.ErrNotFound) || err == nil && (!sess.Live(s.now()) || sess.UserID != claims.Subject || sess.CookieHash != nil) {
		s.sessions.Set(claims.SessionID, nil)
		return nil, errBadCredential()
	}
	if err != nil {
		return nil, err
	}
	p, err := s.sessionPrincipal(ctx, sess)
	if err != nil {
		return nil, err
	}
	if p == nil {
		s.sessions.Set(claims.SessionID, nil)
		return nil, errBadCredential()
	}
	s.sessions.Set(claims.SessionID, p)
	return p, nil
}

// sessionPrincipal is the user acting through a live web session, with
// the user's row and their first conglomerate's; nil when the user is gone.
func (s *Service) sessionPrincipal(ctx context.Context, sess models.WebSession) (*service.Principal, error) {
	p := &service.Principal{Credential: service.CredentialWebSession, CredentialID: sess.ID, UserID: sess.UserID}
	congs, err := s.store.Identity().ListConglomeratesForUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if len(congs) > 0 {
		p.ConglomerateID = congs[0].ID
		p.Account = &congs[0]
	}
	return s.withUser(ctx, p)
}

// withUser puts the principal's user row on it; nil when the user is
// gone (deleted accounts revoke their credentials, so only a deletion
// racing the look-up sees this).
func (s *Service) withUser(ctx context.Context, p *service.Principal) (*service.Principal, error) {
	u, err := s.store.Identity().GetUser(ctx, p.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p.User = &u
	return p, nil
}

// withAccount puts the principal's conglomerate row on it when it exists
// and, for a user, when they are a member of it (a missing one stays nil:
// GET /auth/me then reads it and says so; the authorization step reads
// memberships for a principal without it).
func (s *Service) withAccount(ctx context.Context, p *service.Principal) error {
	if p.ConglomerateID == "" {
		return nil
	}
	var c models.Conglomerate
	var err error
	if p.IsUser() {
		c, err = s.core.MemberAccount(ctx, p.UserID, p.ConglomerateID)
	} else {
		c, err = s.store.Identity().GetConglomerate(ctx, p.ConglomerateID)
	}
	switch {
	case errors.Is(err, models.ErrNotFound), errors.Is(err, store.ErrForbidden):
		return nil
	case err != nil:
		return err
	}
	p.Account = &c
	return nil
}

func (s *Service) authenticateUserKey(ctx context.Context, raw string) (*service.Principal, error) {
	hash := service.HashSecret(raw)
	if p, ok := s.userKeys.Get(hash); ok {
		if p == nil {
			return nil, errBadCredential() // cached miss
		}
		return p, nil
	}
	key, err := s.store.Identity().GetAPIKeyByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) || err == nil && !key.Live(s.now()) {
		s.userKeys.Set(hash, nil)
		return nil, errBadCredential()
	}
	if err != nil {
		return nil, err
	}
	if !service.EqualHash(key.TokenHash, hash) {
		return nil, errBadCredential()
	}
	p := &service.Principal{Credential: service.CredentialPersonal, CredentialID: key.ID, UserID: key.UserID, ConglomerateID: key.ConglomerateID}
	if key.Kind == models.APIKeySession {
		p.Credential = service.CredentialSessionKey
	}
	if p, err = s.withUser(ctx, p); err != nil || p == nil {
		if err == nil {
			s.userKeys.Set(hash, nil)
			err = errBadCredential()
		}
		return nil, err
	}
	if err := s.withAccount(ctx, p); err != nil {
		return nil, err
	}
	s.userKeys.Set(hash, p)
	// last_used_at is written at most once per cache period, not per request.
	if err := s.store.Identity().TouchAPIKey(ctx, key.ID, s.now()); err != nil {
		s.logger.WarnContext(ctx, "record api key use", "error", err)
	}
	return p, nil
}

func (s *Service) authenticateAdmin(ctx context.Context, raw string) (*service.Principal, error) {
	hash := service.HashSecret(raw)
	if p, ok := s.adminKeys.Get(hash); ok {
		if p == nil {
			return nil, errBadCredential()
		}
		return p, nil
	}
	tok, err := s.store.Identity().GetAdminTokenByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) || err == nil && tok.RevokedAt != nil {
		s.adminKeys.Set(hash, nil)
		return nil, errBadCredential()
	}
	if err != nil {
		return nil, err
	}
	p := &service.Principal{Credential: service.CredentialAdminToken, CredentialID: tok.ID}
	s.adminKeys.Set(hash, p)
	return p, nil
}

// CreateAdminToken mints an operator credential (holdco admin create-token).
// The raw value is returned once.
func (s *Service) CreateAdminToken(ctx context.Context, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return "", models.Errorf(models.CodeInvalidArgument, "The admin token name must be 1 to 100 characters.").WithField("name")
	}
	raw, hash := service.NewCredential(service.PrefixAdminToken)
	if err := s.store.Identity().CreateAdminToken(ctx, &models.AdminToken{Name: name, TokenHash: hash}); err != nil {
		return "", err
	}
	return raw, nil
}

// authenticateCompanyKey resolves a svc_c_v1_ key to its company, with
// its account's row. Results (hits and misses) are cached for
// CompanyKeyCacheTTL.
func (s *Service) authenticateCompanyKey(ctx context.Context, raw string) (*service.Principal, error) {
	hash := service.HashSecret(raw)
	if p, ok := s.companyKeys.Get(hash); ok {
		if p == nil {
			return nil, errBadCredential()
		}
		return p, nil
	}
	k, c, err := s.store.Identity().CompanyKeyByHash(ctx, hash)
	switch {
	case errors.Is(err, models.ErrNotFound), err == nil && (k.RevokedAt != nil || c.Status == models.CompanyArchived):
		s.companyKeys.Set(hash, nil)
		return nil, errBadCredential()
	case err != nil:
		return nil, err
	}
	p := &service.Principal{Credential: service.CredentialCompanyKey, CredentialID: k.ID, CompanyID: c.ID, ConglomerateID: c.ConglomerateID}
	if err := s.withAccount(ctx, p); err != nil {
		return nil, err
	}
	s.companyKeys.Set(hash, p)
	return p, nil
}
