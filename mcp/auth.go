package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"holdco/models"
	"holdco/service"
)

// principalKey is where the bearer check leaves the principal in the
// SDK's token info.
const principalKey = "holdco.principal"

// verifier accepts only access tokens of the authorization server: service
// API keys, CLI session keys and web JWTs are refused (the introspector
// does not know them, and a principal of any other kind is refused here
// again).
func (h *handler) verifier(tokens tokenIntrospector) auth.TokenVerifier {
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if tokens == nil {
			return nil, fmt.Errorf("%w: this server has no authorization server to check tokens with", auth.ErrInvalidToken)
		}
		p, err := tokens.Introspect(ctx, token)
		if models.IsCode(err, models.CodeUnauthenticated) {
			return nil, fmt.Errorf("%w: not a live access token of the authorization server", auth.ErrInvalidToken)
		}
		if err != nil {
			// Never the token itself, nor the cause, in the answer.
			h.logFailure(ctx, "connector: token introspection failed", err)
			return nil, errors.New("the token could not be checked; retry shortly")
		}
		if p.Credential != service.CredentialOAuthAccess || p.UserID == "" {
			return nil, fmt.Errorf("%w: the connector accepts only OAuth access tokens", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{Scopes: []string{Scope}, UserID: p.UserID, Extra: map[string]any{principalKey: p}}, nil
	}
}

// withPrincipal puts the request's principal (from the bearer check) in
// ctx for the use cases.
func withPrincipal(ctx context.Context, req sdk.Request) context.Context {
	if extra := req.GetExtra(); extra != nil {
		return withTokenPrincipal(ctx, extra.TokenInfo)
	}
	return ctx
}

// withTokenPrincipal puts the principal of the bearer check's token info
// in ctx.
func withTokenPrincipal(ctx context.Context, info *auth.TokenInfo) context.Context {
	if info != nil {
		if p, ok := info.Extra[principalKey].(service.Principal); ok {
			return service.WithPrincipal(ctx, p)
		}
	}
	return ctx
}
