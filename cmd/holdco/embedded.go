//go:build !race

// A holdco built with -race has no embedded Temporal server (it needs
// TEMPORAL_ADDRESS, or `holdco temporal` of a normal build): under the race
// detector Temporal's thousand packages would compile a second time, and
// make test, which tests this command with -race, would compile holdco and
// its libraries a second time without it. The command's tests give the app
// the tests' server in a process of its own (testenv/apptemporal) instead.

package main

import (
	"context"
	"errors"

	"holdco/app"
	"holdco/devserver"
)

// The embedded default's Temporal server runs in this process.
func init() { app.UseEmbeddedTemporal(startDevServer) }

func startDevServer(ctx context.Context, o app.EmbeddedTemporalOptions) (app.EmbeddedTemporal, error) {
	srv, err := devserver.Start(ctx, devserver.Options{
		DatabaseFile:     o.DatabaseFile,
		Host:             o.Host,
		FrontendPort:     o.FrontendPort,
		UIPort:           o.UIPort,
		Namespace:        o.Namespace,
		SearchAttributes: o.SearchAttributes,
		Logger:           o.Logger,
		LogLevel:         o.LogLevel,
	})
	var pe *devserver.PortInUseError
	if errors.As(err, &pe) {
		return nil, &app.PortInUseError{Port: pe.Port, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return srv, nil
}
