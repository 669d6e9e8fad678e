package api

import (
	"context"
	"net/http"
	"net/netip"

	"github.com/danielgtaylor/huma/v2"
)

type clientAddrKey struct{}

// withClientAddr is an operation middleware that puts the client's address
// (the peer, or what a trusted proxy names in X-Forwarded-For) into the
// context, for limits counted per address.
func withClientAddr(trusted []netip.Prefix) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		r := &http.Request{RemoteAddr: ctx.RemoteAddr(), Header: http.Header{}}
		ctx.EachHeader(func(name, value string) {
			if http.CanonicalHeaderKey(name) == "X-Forwarded-For" {
				r.Header.Add("X-Forwarded-For", value)
			}
		})
		addr := ""
		if a := clientIP(r, trusted); a.IsValid() {
			addr = a.String()
		}
		next(huma.WithValue(ctx, clientAddrKey{}, addr))
	}
}

// clientAddrFrom is the address withClientAddr found ("" when unknown).
func clientAddrFrom(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}
