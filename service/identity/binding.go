package identity

import (
	"crypto/sha256"
	"encoding/base64"
	"time"

	"holdco/models"
	"holdco/service"
)

// A browser sign-in is bound to the browser that started it (RFC 9700
// §4.7.1, login CSRF): the start hands the browser a random value in a
// short-lived HttpOnly cookie, the signed state carries only its hash, and
// the callback accepts the provider's code only with the cookie. Whoever
// opens someone else's callback URL (an attacker's own code and state) has
// no such cookie and is not signed in; the code is not even exchanged.
// holdco's PKCE verifier towards the provider is derived from the nonce
// and the cookie's value, so the state alone cannot finish a flow.

// SignInStart is where a browser goes to sign in and the cookie that binds
// the sign-in to it.
type SignInStart struct {
	URL string
	// Binding is the cookie's value; the adapter sets it under
	// SignInCookieName(State) for SignInCookieTTL, HttpOnly, Path=/,
	// SameSite=Lax (the provider's redirect back is a top-level GET).
	Binding string
	State   string
}

// SignInCookieTTL is the binding cookie's lifetime: the sign-in state's.
const SignInCookieTTL = loginStateTTL

// ReasonOtherBrowser is the ?error= of a callback opened in a browser
// that did not start the sign-in (or whose binding cookie expired).
const ReasonOtherBrowser = "other_browser"

// SignInCookieName names the binding cookie of the sign-in whose state
// this is. Each sign-in has its own, so sign-ins in two tabs do not undo
// each other. Over https the name takes the __Host- prefix (Secure,
// Path=/, no Domain): a sibling host cannot set it.
func SignInCookieName(state string, secure bool) string {
	sum := sha256.Sum256([]byte(state))
	name := "holdco_signin_" + base64.RawURLEncoding.EncodeToString(sum[:9])
	if secure {
		return "__Host-" + name
	}
	return name
}

// newBinding returns a binding value and the hash the state carries.
func newBinding() (value, hash string) {
	value = service.NewSecret(32)
	return value, service.HashSecret(value)
}

// checkBinding compares the cookie's value with the state's hash.
func checkBinding(stateHash, cookie, again string) error {
	if stateHash == "" || cookie == "" || !service.EqualHash(stateHash, service.HashSecret(cookie)) {
		return models.Errorf(models.CodeBadRequest, "This sign-in was not started in this browser, or it took longer than %d minutes; %s", int(SignInCookieTTL/time.Minute), again).
			With("reason", ReasonOtherBrowser)
	}
	return nil
}
