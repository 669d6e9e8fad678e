package mcp

import "net/http"

// NewCounting is New (the tools/call fast path off when sdkCallsOnly)
// with the count of calls the fast path answered.
func NewCounting(d Deps, sdkCallsOnly bool) (http.Handler, func() int64) {
	mux, h := newConnector(d, sdkCallsOnly)
	return mux, h.fastCalls.Load
}
