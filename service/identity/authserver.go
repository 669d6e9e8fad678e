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
	Binding  string `json:"b"` // hash of the browser binding cookie's value
	ReturnTo string `json:"r"`
}

// BeginAuthServerLogin starts a sign-in for the authorization server: the
// identity provider URL (the same provider and the same account rules as
// holdco's own sign-in, back to callbackURL on the authorization server's
// origin) and the cookie that binds it to this browser (binding.go).
// returnTo (a path there) travels in the signed state; switchAccount asks
// the provider to sign in afresh.
func (s *Service) BeginAuthServerLogin(ctx context.Context, callbackURL, returnTo string, switchAccount bool) (SignInStart, error) {
	binding, hash := newBinding()
	st := authServerLoginState{Expiring: service.Expiring{Exp: s.now().Add(loginStateTTL).Unix()}, Nonce: service.NewSecret(16), Binding: hash, ReturnTo: returnTo}
	state, err := s.sign.Seal(purposeAuthServerLogin, st)
	if err != nil {
		return SignInStart{}, err
	}
	params := map[string]string{}
	if switchAccount {
		params["prompt"] = "login"
	}
	u, err := s.idp.AuthURL(ctx, callbackURL, state, service.PKCEChallenge(s.idpVerifier(purposeAuthServerLogin, st.Nonce, binding)), params)
	if err != nil {
		return SignInStart{}, models.Errorf(models.CodeUpstreamUnavailable, "The sign-in provider cannot be reached right now; retry shortly.").Wrap(err)
	}
	return SignInStart{URL: u, Binding: binding, State: state}, nil
}

// CompleteAuthServerLogin handles the provider's redirect to the
// authorization server's callback: the signed-in (or signed-up) user and
// the path to return to. binding is the value of the browser's
// SignInCookieName(state) cookie: a callback opened in a browser that did
// not start the sign-in is refused before the code is exchanged.
func (s *Service) CompleteAuthServerLogin(ctx context.Context, callbackURL, code, state, binding string) (models.User, string, error) {
	var st authServerLoginState
	if err := s.sign.Open(purposeAuthServerLogin, state, &st); err != nil {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in state is missing or was tampered with; start again from the assistant.")
	}
	if st.Expired(s.now()) {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in took too long; start again from the assistant.")
	}
	if err := checkBinding(st.Binding, binding, "start again from the assistant."); err != nil {
		return models.User{}, "", err
	}
	id, err := s.idp.Exchange(ctx, callbackURL, code, s.idpVerifier(purposeAuthServerLogin, st.Nonce, binding))
	if err != nil {
		return models.User{}, "", models.Errorf(models.CodeBadRequest, "The sign-in provider did not accept the sign-in; start again from the assistant.").Wrap(err)
	}
	user, err := s.signIn(ctx, id)
	if err != nil {
		return models.User{}, "", err
	}
	return user, st.ReturnTo, nil
}
