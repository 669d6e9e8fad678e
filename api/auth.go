package api

import (
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
)

// bearerSecurity marks an operation as needing a bearer credential.
var bearerSecurity = []map[string][]string{{"bearer": {}}}

// Operation metadata keys.
const (
	// adminOnly: only the admin credential may call the operation.
	adminOnly = "admin-only"
	// selfAuthenticated: the handler checks the bearer itself (documented
	// as bearer-secured, but the middleware lets it through).
	selfAuthenticated = "self-authenticated"
)

// authenticate is the huma middleware behind every operation with
// Security: it resolves the bearer credential into a principal (401 with
// WWW-Authenticate: Bearer when missing or wrong) and enforces admin-only
// operations (403 for any other valid credential).
func authenticate(api huma.API, svc *identity.Service) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil || len(op.Security) == 0 {
			next(ctx)
			return
		}
		if self, _ := op.Metadata[selfAuthenticated].(bool); self {
			next(ctx)
			return
		}
		p, err := svc.AuthenticateRef(ctx.Context(), bearerToken(ctx.Header("Authorization")))
		if err != nil {
			// A domain error picks its own status (401); anything else is a
			// server failure, not a bad credential.
			_ = huma.WriteErr(api, ctx, http.StatusInternalServerError, "authentication failed", err)
			return
		}
		if admin, _ := op.Metadata[adminOnly].(bool); admin && !p.IsAdmin() {
			_ = huma.WriteErr(api, ctx, http.StatusForbidden, "", models.Errorf(models.CodeForbidden, "This endpoint needs the admin credential."))
			return
		}
		// An answer for a credential is that principal's: no cache keeps it
		// (a browser's or a proxy that ignores Authorization). A handler
		// that means otherwise sets its own.
		ctx.SetHeader("Cache-Control", "no-store")
		next(huma.WithContext(ctx, service.WithPrincipalRef(ctx.Context(), p)))
	}
}

// bearerToken extracts the credential of an "Authorization: Bearer …" header.
func bearerToken(header string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
