package identity_test

import (
	"context"
	"holdco/service/servicetest"
	"testing"
)

// BenchmarkAuthenticatePAT measures a personal-access-token lookup once it
// is cached (every request after the first within 30 s).
func BenchmarkAuthenticatePAT(b *testing.B) {
	e := servicetest.New(b)
	tok, err := e.Svc.CreatePersonalToken(e.As(b, e.WebLogin(b, "ada@example.com", "ada")), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Svc.Authenticate(ctx, tok.Raw); err != nil {
			b.Fatal(err)
		}
	}
}
