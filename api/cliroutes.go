package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"

	"holdco/service/identity"

	"github.com/danielgtaylor/huma/v2"
)

// CliStartResponse starts the CLI loopback login.
type CliStartResponse struct {
	AuthorizationURL string `json:"authorization_url" format:"uri" doc:"Open this in a browser; after sign-in it redirects to the CLI's loopback port."`
	ExpiresIn        int    `json:"expires_in" doc:"Seconds the login may take."`
}

// CliTokenRequest exchanges the one-time code for a session key.
type CliTokenRequest struct {
	Code         string `json:"code" minLength:"1" maxLength:"200" doc:"The one-time code the CLI received on its loopback port."`
	CodeVerifier string `json:"code_verifier" minLength:"43" maxLength:"128" doc:"The PKCE verifier whose S256 challenge started the login."`
}

// CliTokenResponse carries a new session key (svc_u_v1_…), shown once.
type CliTokenResponse struct {
	AccessToken    string       `json:"access_token"`
	TokenType      string       `json:"token_type" enum:"Bearer"`
	User           UserResponse `json:"user"`
	ConglomerateID string       `json:"conglomerate_id" format:"uuid"`
}

// DeviceStartResponse opens a device-flow grant (RFC 8628).
type DeviceStartResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code" example:"BDFG-HJKL"`
	VerificationURI         string `json:"verification_uri" format:"uri"`
	VerificationURIComplete string `json:"verification_uri_complete" format:"uri"`
	Interval                int    `json:"interval" doc:"Seconds to wait between polls."`
	ExpiresIn               int    `json:"expires_in"`
}

// DeviceTokenRequest polls a device-flow grant.
type DeviceTokenRequest struct {
	DeviceCode string `json:"device_code" minLength:"1" maxLength:"200"`
}

// DeviceTokenResponse is the grant's state; after approval it carries the
// session key and identity, once.
type DeviceTokenResponse struct {
	Status         string        `json:"status" enum:"authorization_pending,slow_down,expired_token,access_denied,complete"`
	Interval       int           `json:"interval" doc:"Seconds to wait before the next poll (grows after slow_down)."`
	AccessToken    *string       `json:"access_token,omitempty"`
	TokenType      *string       `json:"token_type,omitempty"`
	User           *UserResponse `json:"user,omitempty"`
	ConglomerateID *string       `json:"conglomerate_id,omitempty"`
}

type cliHandlers struct {
	svc     *identity.Service
	trusted []netip.Prefix // proxies that may name the client in X-Forwarded-For
}

func registerCLIRoutes(api huma.API, h *cliHandlers) {
	huma.Register(api, huma.Operation{
		OperationID: "cli-start", Method: http.MethodGet, Path: "/auth/cli/start", Tags: []string{"cli auth"},
		Summary: "Start the CLI loopback login",
	}, h.start)
	huma.Register(api, huma.Operation{
		OperationID: "cli-callback", Method: http.MethodGet, Path: "/auth/cli/callback", Tags: []string{"cli auth"},
		Summary:       "Identity provider callback of the CLI login",
		Description:   "Redirects to http://127.0.0.1:<port>/callback with `?code=` (single use, bound to the PKCE challenge) or `?error=`.",
		DefaultStatus: http.StatusFound,
	}, h.callback)
	huma.Register(api, huma.Operation{
		OperationID: "cli-token", Method: http.MethodPost, Path: "/auth/cli/token", Tags: []string{"cli auth"},
		Summary:     "Exchange the one-time code for a session key",
		Description: "The first attempt uses the code up: a wrong verifier or a replay is refused (400 bad_request) and the code cannot be used again.",
	}, h.token)
	huma.Register(api, huma.Operation{
		OperationID: "cli-logout", Method: http.MethodPost, Path: "/auth/cli/logout", Tags: []string{"cli auth"},
		Summary:     "Revoke the presented session key",
		Description: "Revokes the API key sent as bearer; repeating it is a no-op, and a web session token is left alone.",
		Security:    bearerSecurity, Metadata: map[string]any{selfAuthenticated: true}, DefaultStatus: http.StatusNoContent,
	}, h.logout)
	huma.Register(api, huma.Operation{
		OperationID: "cli-device-start", Method: http.MethodPost, Path: "/auth/cli/device/start", Tags: []string{"cli auth"},
		Summary: "Start the device-code login (RFC 8628)",
		Description: fmt.Sprintf("Each client address may start %d device logins a minute and %d an hour (counted by every replica together); more answer 429 `rate_limited` with Retry-After.",
			identity.DeviceStartsPerMinute, identity.DeviceStartsPerHour),
		Middlewares: huma.Middlewares{withClientAddr(h.trusted)},
	}, h.deviceStart)
	huma.Register(api, huma.Operation{
		OperationID: "cli-device-token", Method: http.MethodPost, Path: "/auth/cli/device/token", Tags: []string{"cli auth"},
		Summary:     "Poll the device-code login",
		Description: "Answers 200 with `status` authorization_pending, slow_down (polled faster than `interval`), expired_token, access_denied, or complete with the session key (once). An unknown or already used device code is refused with 400.",
	}, h.deviceToken)
}

type cliStartInput struct {
	Port          int    `query:"port" required:"true" minimum:"1024" maximum:"65535" doc:"The CLI's loopback port."`
	CodeChallenge string `query:"code_challenge" required:"true" minLength:"43" maxLength:"43" pattern:"^[A-Za-z0-9_-]{43}$" doc:"PKCE S256 challenge, base64url without padding."`
	Env           string `query:"env" maxLength:"64" doc:"Name of the CLI's environment, shown in the session's name."`
	ScreenHint    string `query:"screen_hint" doc:"sign-up or sign-in; other values are ignored."`
}

type cliStartOutput struct{ Body CliStartResponse }

func (h *cliHandlers) start(ctx context.Context, in *cliStartInput) (*cliStartOutput, error) {
	st, err := h.svc.BeginCLILogin(ctx, in.Port, in.CodeChallenge, in.Env, in.ScreenHint)
	if err != nil {
		return nil, err
	}
	return &cliStartOutput{Body: CliStartResponse{AuthorizationURL: st.AuthorizationURL, ExpiresIn: st.ExpiresIn}}, nil
}

type cliCallbackInput struct {
	State string `query:"state" required:"true"`
	Code  string `query:"code"`
	Error string `query:"error"`
}

func (h *cliHandlers) callback(ctx context.Context, in *cliCallbackInput) (*redirectOutput, error) {
	u, err := h.svc.CompleteCLILogin(ctx, in.State, in.Code, in.Error)
	if err != nil {
		return nil, err
	}
	return redirect(u), nil
}

type cliTokenInput struct{ Body CliTokenRequest }
type cliTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         CliTokenResponse
}

func (h *cliHandlers) token(ctx context.Context, in *cliTokenInput) (*cliTokenOutput, error) {
	g, err := h.svc.ExchangeCLICode(ctx, in.Body.Code, in.Body.CodeVerifier)
	if err != nil {
		return nil, err
	}
	return &cliTokenOutput{CacheControl: "no-store", Body: CliTokenResponse{
		AccessToken: g.Token, TokenType: "Bearer", User: toUserResponse(g.User), ConglomerateID: g.ConglomerateID,
	}}, nil
}

type cliLogoutInput struct {
	Authorization string `header:"Authorization"`
}

func (h *cliHandlers) logout(ctx context.Context, in *cliLogoutInput) (*struct{}, error) {
	return nil, h.svc.CLILogout(ctx, bearerToken(in.Authorization))
}

type deviceStartOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         DeviceStartResponse
}

func (h *cliHandlers) deviceStart(ctx context.Context, _ *struct{}) (*deviceStartOutput, error) {
	d, err := h.svc.StartDevice(ctx, clientAddrFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &deviceStartOutput{CacheControl: "no-store", Body: DeviceStartResponse{
		DeviceCode: d.DeviceCode, UserCode: d.UserCode, VerificationURI: d.VerificationURI,
		VerificationURIComplete: d.VerificationURIComplete, Interval: d.Interval, ExpiresIn: d.ExpiresIn,
	}}, nil
}

type deviceTokenInput struct{ Body DeviceTokenRequest }
type deviceTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         DeviceTokenResponse
}

func (h *cliHandlers) deviceToken(ctx context.Context, in *deviceTokenInput) (*deviceTokenOutput, error) {
	poll, err := h.svc.PollDevice(ctx, in.Body.DeviceCode)
	if err != nil {
		return nil, err
	}
	out := &deviceTokenOutput{CacheControl: "no-store", Body: DeviceTokenResponse{Status: poll.Status, Interval: poll.Interval}}
	if g := poll.Grant; g != nil {
		bearer, u := "Bearer", toUserResponse(g.User)
		out.Body.AccessToken, out.Body.TokenType, out.Body.User, out.Body.ConglomerateID = &g.Token, &bearer, &u, &g.ConglomerateID
	}
	return out, nil
}
