// Package layering holds the test of holdco's package layering (see
// docs/architecture.md): which package may link which, checked with
// `go list -deps` so a forbidden import fails `go test`.
package layering
