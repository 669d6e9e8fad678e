// Package apptemporal gives an app under test its embedded Temporal server
// in a process of its own (testenv.TemporalProcess: the tests' temporaldev
// binary, built without -race), so that a test binary built with -race
// links neither Temporal's server nor a second, uninstrumented compile of
// holdco. The tests of app and of the holdco command register it in their
// TestMain:
//
//	func TestMain(m *testing.M) {
//		app.UseEmbeddedTemporal(apptemporal.Start)
//		testenv.Main(m)
//	}
//
// It is a package of its own because it imports app: testenv does not, so
// that the test binaries that use testenv do not link the whole app.
package apptemporal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"holdco/app"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// Start starts the server for app.UseEmbeddedTemporal. The process
// registers holdco's search attributes itself, so options asking for any
// other set are refused.
func Start(ctx context.Context, o app.EmbeddedTemporalOptions) (app.EmbeddedTemporal, error) {
	if o.SearchAttributes != nil && !maps.Equal(o.SearchAttributes, contract.SearchAttributes()) {
		return nil, fmt.Errorf("testenv's Temporal process registers holdco's search attributes, not %v", o.SearchAttributes)
	}
	p, err := testenv.StartTemporalProcess(ctx, testenv.TemporalProcessOptions{
		DatabaseFile: o.DatabaseFile,
		Host:         o.Host,
		Port:         o.FrontendPort,
		UIPort:       o.UIPort,
		Namespace:    o.Namespace,
		LogLevel:     strings.ToLower(o.LogLevel.String()),
	})
	var inUse *testenv.PortInUseError
	if errors.As(err, &inUse) {
		return nil, &app.PortInUseError{Port: inUse.Port, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}
