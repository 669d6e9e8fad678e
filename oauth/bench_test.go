package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"holdco/service"
	authz "holdco/service/oauth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// BenchmarkConnectorAuth is the connector path's token validation
// (Bearer header → Introspect, cached after the first request) against the
// same handler with no authentication; docs/benchmarks.md reports the
// ratio.
func BenchmarkConnectorAuth(b *testing.B) {
	env := servicetest.NewWith(b, usecases.Options{OAuth: authz.Config{Issuer: "http://auth.test", Resource: resource}})
	svc := env.Svc.OAuth
	token := mintToken(b, env)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	authed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p, err := svc.Introspect(r.Context(), raw)
		if !found || err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ok.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
	})
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
	b.Run("no_auth", func(b *testing.B) { run(b, ok) })
	b.Run("introspect_cached", func(b *testing.B) { run(b, authed) })
	b.Run("introspect_call_only", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			if _, err := svc.Introspect(ctx, token); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// mintToken runs the flow through the use cases (no HTTP) and returns an
// access token.
func mintToken(b *testing.B, env *servicetest.Env) string {
	b.Helper()
	ctx := env.As(b, env.WebLogin(b, "bench@example.com", "bench"))
	svc := env.Svc.OAuth
	p, _ := service.PrincipalFrom(ctx)
	reg, err := svc.Register(ctx, authz.Metadata{ClientName: ptr("Bench"), RedirectURIs: &[]string{"https://bench.example/cb"}})
	require.NoError(b, err)
	q := authParams(reg.ClientID, "https://bench.example/cb")
	req, err := svc.ParseAuthorization(ctx, q.Encode())
	require.NoError(b, err)
	redirect, err := svc.Approve(ctx, p.UserID, req)
	require.NoError(b, err)
	code := strings.SplitN(strings.SplitN(redirect, "code=", 2)[1], "&", 2)[0]
	tok, err := svc.Exchange(ctx, authz.TokenRequest{GrantType: "authorization_code", Code: code, RedirectURI: "https://bench.example/cb",
		ClientID: reg.ClientID, CodeVerifier: verifier})
	require.NoError(b, err)
	return tok.AccessToken
}

func ptr[T any](v T) *T { return &v }
