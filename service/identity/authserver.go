package identity

import (
	"context"

	"holdco/models"
	"holdco/service"
)

// purposeAuthServerLogin seals the state of a sign-in started by the
// authorization server (oauth/) on its own origin and callback.
const purposeAuthServerLogin = "oauth-server-login"

type authServerLoginState struct {
	service.Expiring
	Nonce    string `json:"n"`
	ReturnTo string `json:"r"`
}

// BeginAuthServerLogin returns the identity provider URL that signs a
// user in for the authorization server: the same provider and the same
// account rules as holdco's own sign-in, back to callbackURL on the
// authorization server's origin. returnTo (a path there) travels in the
// signed state; switchAccount asks the provider to sign in afresh.
func (s *Service) BeginAuthServerLogin(ctx context.Context, callbackURL, returnTo string, switchAccount bool) (string, error) {
	st := authServerLoginState{Expiring: service.Expiring{Exp: s.now().Add(loginStateTTL).Unix()}, Nonce: service.NewSecret(16), ReturnTo: returnTo}
	state, err := s.sign.Seal(purposeAuthServerLogin, st)
	if err != nil {
		return "", err
	}
	params := map[string]string{}
	if switchAccount {
		params["prompt"] = "login"
	}
	u, err := s.idp.AuthURL(ctx, callbackURL, state, service.PKCEChallenge(s.idpVerifier(purposeAuthServerLogin, st.Nonce)), params)
	if err != nil {
		return "", models.Errorf(models.CodeUpstreamUnavailable, "The sign-in provider cannot be reached right now; retry shortly.").Wrap(err)
	}
	return u, nil
}

// CompleteAuthServerLogin handles the provider's redirect to the
// authorization server's callback: the signed-in (or signed-up) user and
// the path to return to.
func (s *Service) CompleteAuthServerLogin(ctx context.Context, callbackURL, code, state string) (models.User, string, error) {
	var st authServerLoginState
	if err := s.sign.Open(purposeAuthServerLogin, state, &st); err != nil {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in state is missing or was tampered with; start again from the assistant.")
	}
	if st.Expired(s.now()) {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in took too long; start again from the assistant.")
	}
	id, err := s.idp.Exchange(ctx, callbackURL, code, s.idpVerifier(purposeAuthServerLogin, st.Nonce))
	if err != nil {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in provider did not accept the sign-in; start again from the assistant.").Wrap(err)
	}
	user, err := s.signIn(ctx, id)
	if err != nil {
		return models.User{}, "", err
	}
	return user, st.ReturnTo, nil
}
