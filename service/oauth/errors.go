package oauth

import "net/http"

// OAuth error codes (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2,
// RFC 8707, OpenID Connect prompt=none).
const (
	ErrInvalidRequest          = "invalid_request"
	ErrInvalidClient           = "invalid_client"
	ErrInvalidGrant            = "invalid_grant"
	ErrUnsupportedGrantType    = "unsupported_grant_type"
	ErrUnsupportedResponseType = "unsupported_response_type"
	ErrInvalidScope            = "invalid_scope"
	ErrInvalidTarget           = "invalid_target"
	ErrAccessDenied            = "access_denied"
	ErrLoginRequired           = "login_required"
	ErrConsentRequired         = "consent_required"
	ErrServerError             = "server_error"
	ErrTemporarilyUnavailable  = "temporarily_unavailable"
	ErrInvalidRedirectURI      = "invalid_redirect_uri"
	ErrInvalidClientMetadata   = "invalid_client_metadata"
)

// Error is an OAuth protocol error: the code and description of the JSON
// body (or the redirect's query), and the HTTP status of a direct answer.
type Error struct {
	Code        string
	Description string
	Status      int
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func oauthError(code, description string) *Error {
	status := http.StatusBadRequest
	switch code {
	case ErrInvalidClient:
		status = http.StatusUnauthorized
	case ErrServerError:
		status = http.StatusInternalServerError
	case ErrTemporarilyUnavailable:
		status = http.StatusServiceUnavailable
	}
	return &Error{Code: code, Description: description, Status: status}
}

// AuthorizeError is a refused authorization request. Redirect says
// whether it may go back to the client (to RedirectURI with State and
// iss); otherwise the service shows it on a page of its own (rule 8, and
// any request whose client or redirect URI cannot be trusted).
type AuthorizeError struct {
	Code        string
	Description string
	Redirect    bool
	RedirectURI string
	State       string
}

func (e *AuthorizeError) Error() string { return e.Code + ": " + e.Description }

func authorizeError(e *Error) *AuthorizeError {
	return &AuthorizeError{Code: e.Code, Description: e.Description}
}
