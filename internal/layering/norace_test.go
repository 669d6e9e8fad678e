//go:build !race

package layering_test

// raceFlags: see race_test.go.
var raceFlags []string
