package service_test

import (
	"context"
	"testing"
)

// BenchmarkAuthenticatePAT measures a personal-access-token lookup once it
// is cached (every request after the first within 30 s).
func BenchmarkAuthenticatePAT(b *testing.B) {
	e := newEnv(b)
	tok, err := e.svc.CreatePersonalToken(e.as(b, e.webLogin(b, "ada@example.com", "ada")), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.Authenticate(ctx, tok.Raw); err != nil {
			b.Fatal(err)
		}
	}
}
