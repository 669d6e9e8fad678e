package identity

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"holdco/models"
	"holdco/service"
)

const cliCodeTTL = 5 * time.Minute

type cliLoginState struct {
	service.Expiring
	Nonce     string `json:"n"`
	Port      int    `json:"p"`
	Challenge string `json:"c"`
	Env       string `json:"e,omitempty"`
}

// CLIStart is the answer to GET /auth/cli/start.
type CLIStart struct {
	AuthorizationURL string
	ExpiresIn        int
}

// BeginCLILogin starts the loopback login: the CLI listens on
// 127.0.0.1:port and opens the returned URL in a browser. The port and the
// CLI's PKCE challenge travel in the signed state; the port is trusted only
// because it is signed.
func (s *Service) BeginCLILogin(ctx context.Context, port int, challenge, env, screenHint string) (CLIStart, error) {
	if port < 1024 || port > 65535 {
		return CLIStart{}, models.Errorf(models.CodeInvalidArgument, "port must be a loopback port from 1024 to 65535.").WithField("port")
	}
	if !service.ValidChallenge(challenge) {
		return CLIStart{}, models.Errorf(models.CodeInvalidArgument, "code_challenge must be an S256 PKCE challenge: 43 characters of base64url without padding.").WithField("code_challenge")
	}
	st := cliLoginState{Expiring: service.Expiring{Exp: s.now().Add(loginStateTTL).Unix()}, Nonce: service.NewSecret(16), Port: port, Challenge: challenge, Env: env}
	state, err := s.sign.Seal(purposeCLILogin, st)
	if err != nil {
		return CLIStart{}, err
	}
	u, err := s.idpAuthURL(ctx, CLICallbackPath, s.idpVerifier(purposeCLILogin, st.Nonce, ""), state, screenHint)
	if err != nil {
		return CLIStart{}, err
	}
	return CLIStart{AuthorizationURL: u, ExpiresIn: int(loginStateTTL.Seconds())}, nil
}

// CompleteCLILogin handles the provider's redirect to /auth/cli/callback and
// returns where to send the browser: the CLI's loopback listener with a
// one-time code, or with ?error= on any failure. Only a state whose port
// cannot be read at all yields an error instead (there is nowhere to go).
func (s *Service) CompleteCLILogin(ctx context.Context, state, code, idpError string) (string, error) {
	var st cliLoginState
	if err := s.sign.Open(purposeCLILogin, state, &st); err != nil {
		port, ok := unverifiedPort(state)
		if !ok {
			return "", models.Errorf(models.CodeBadRequest, "The login state is missing or unreadable; run `holdco login` again.")
		}
		// The port is not trusted, but the target is loopback and carries
		// only an error, so telling the CLI is safe.
		return loopbackURL(port, url.Values{"error": {"invalid_state"}}), nil
	}
	fail := func(reason string) (string, error) {
		return loopbackURL(st.Port, url.Values{"error": {reason}}), nil
	}
	switch {
	case st.Expired(s.now()):
		return fail("expired")
	case idpError != "":
		return fail("access_denied")
	case code == "":
		return fail("missing_code")
	}
	id, err := s.idp.Exchange(ctx, s.cfg.PublicURL+CLICallbackPath, code, s.idpVerifier(purposeCLILogin, st.Nonce, ""))
	if err != nil {
		s.logger.WarnContext(ctx, "cli login: code exchange failed", "error", err)
		return fail("exchange_failed")
	}
	user, err := s.signIn(ctx, id)
	if err != nil {
		if reason := RefusalReason(err); reason == ReasonAccountDeleted {
			return fail(reason)
		}
		s.logger.ErrorContext(ctx, "cli login: sign in", "error", err)
		return fail("server_error")
	}
	otc := service.NewSecret(32)
	now := s.now()
	if err := s.store.Identity().CreateCLIAuthCode(ctx, &models.CLIAuthCode{
		CodeHash: service.HashSecret(otc), UserID: user.ID, CodeChallenge: st.Challenge, Env: st.Env, ExpiresAt: now.Add(cliCodeTTL),
	}); err != nil {
		s.logger.ErrorContext(ctx, "cli login: store code", "error", err)
		return fail("server_error")
	}
	return loopbackURL(st.Port, url.Values{"code": {otc}}), nil
}

func unverifiedPort(state string) (int, bool) {
	var st cliLoginState
	// Decode without the signature check only to find the port.
	if err := (service.Signer{}).OpenUnverified(state, &st); err != nil || st.Port < 1024 || st.Port > 65535 {
		return 0, false
	}
	return st.Port, true
}

func loopbackURL(port int, q url.Values) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback?" + q.Encode()
}

// SessionGrant is a freshly minted CLI session key with its identity.
type SessionGrant struct {
	Token          string
	KeyID          string
	User           models.User
	ConglomerateID string
}

func errBadGrant() *models.Error {
	return models.Errorf(models.CodeBadRequest, "The code is unknown, expired or already used, or the verifier does not match; run `holdco login` again.")
}

// ExchangeCLICode trades the one-time code and the CLI's PKCE verifier for
// a session key. The first attempt uses the code up, right or wrong, so a
// replay or a guessed verifier leaves the grant unusable.
func (s *Service) ExchangeCLICode(ctx context.Context, code, verifier string) (SessionGrant, error) {
	now := s.now()
	c, err := s.store.Identity().ConsumeCLIAuthCode(ctx, service.HashSecret(code), now)
	if errors.Is(err, models.ErrNotFound) {
		return SessionGrant{}, errBadGrant()
	}
	if err != nil {
		return SessionGrant{}, err
	}
	if now.After(c.ExpiresAt) || !service.VerifyPKCE(c.CodeChallenge, verifier) {
		return SessionGrant{}, errBadGrant()
	}
	name := "CLI session"
	if c.Env != "" {
		name = fmt.Sprintf("CLI session (%s)", c.Env)
	}
	return s.mintSessionKey(ctx, c.UserID, name)
}

func (s *Service) mintSessionKey(ctx context.Context, userID, name string) (SessionGrant, error) {
	user, err := s.store.Identity().GetUser(ctx, userID)
	if err != nil {
		return SessionGrant{}, err
	}
	congs, err := s.store.Identity().ListConglomeratesForUser(ctx, userID)
	if err != nil {
		return SessionGrant{}, err
	}
	if len(congs) == 0 {
		return SessionGrant{}, models.Errorf(models.CodeForbidden, "This account has no conglomerate.")
	}
	raw, hash := service.NewCredential(service.PrefixUserKey)
	key := models.APIKey{UserID: userID, ConglomerateID: congs[0].ID, Kind: models.APIKeySession, Name: name, TokenHash: hash}
	if err := s.store.Identity().CreateAPIKey(ctx, &key); err != nil {
		return SessionGrant{}, err
	}
	return SessionGrant{Token: raw, KeyID: key.ID, User: user, ConglomerateID: key.ConglomerateID}, nil
}

// CLILogout revokes the user key (CLI session key or personal access
// token) presented as bearer. It is idempotent: an already revoked key is
// accepted again. A valid web JWT is left alone (a no-op). A company key or
// the admin credential is not a session: logging out with one is refused
// (403) rather than silently doing nothing or revoking a key others use.
func (s *Service) CLILogout(ctx context.Context, bearer string) error {
	switch service.CredentialPrefix(bearer) {
	case service.PrefixUserKey:
	case service.PrefixCompanyKey, service.PrefixAdminToken:
		if _, err := s.Authenticate(ctx, bearer); err != nil {
			return err
		}
		if service.CredentialPrefix(bearer) == service.PrefixCompanyKey {
			return models.Errorf(models.CodeForbidden, "A company key is not a session; rotate it with POST /companies/{company_id}/api-key/rotate.")
		}
		return models.Errorf(models.CodeForbidden, "The admin credential is not a session and cannot be logged out.")
	default:
		_, err := s.Authenticate(ctx, bearer)
		return err // web JWT: a no-op when valid
	}
	hash := service.HashSecret(bearer)
	key, err := s.store.Identity().GetAPIKeyByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return errBadCredential()
	}
	if err != nil {
		return err
	}
	if err := s.store.Identity().RevokeAPIKey(ctx, key.ID, s.now()); err != nil {
		return err
	}
	s.userKeys.Delete(hash)
	return nil
}
