//go:build race

package layering_test

// raceFlags are the build flags this test binary was built with that change
// the build cache's keys: `go list -export` with them finds the export data
// the test build compiled, instead of compiling every package again.
var raceFlags = []string{"-race"}
