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
