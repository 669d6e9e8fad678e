package app

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"holdco/config"
	"holdco/workflows"
)

// TemporalServer is the embedded Temporal development server run on its
// own (`holdco temporal`), for several holdco processes on one machine:
// each points TEMPORAL_ADDRESS at it.
type TemporalServer struct{ a *App }

// StartTemporal starts the development server as `holdco serve` would
// (HOLDCO_TEMPORAL_HOST, _PORT, _UI_PORT, TEMPORAL_NAMESPACE, the state in
// <data dir>/temporal.db), waits until it serves the namespace and
// registers holdco's search attributes.
func StartTemporal(ctx context.Context, cfg config.Config, logger *slog.Logger) (_ *TemporalServer, err error) {
	a := &App{cfg: cfg, logger: logger, listeners: map[Role]*listener{}}
	defer func() {
		if err != nil {
			a.stop(context.Background())
		}
	}()
	opts := client.Options{Namespace: cfg.Temporal.Namespace, Logger: TemporalLogger(logger)}
	if err = a.startEmbeddedTemporal(ctx, opts); err != nil {
		return nil, err
	}
	if err = workflows.EnsureSearchAttributes(ctx, a.Temporal, cfg.Temporal.Namespace); err != nil {
		return nil, err
	}
	return &TemporalServer{a: a}, nil
}

// Address is the frontend's host:port (TEMPORAL_ADDRESS of the processes).
func (s *TemporalServer) Address() string { return s.a.dev.Address() }

// UIAddress is the Web UI's host:port; empty when it is off.
func (s *TemporalServer) UIAddress() string { return s.a.dev.UIAddress() }

// Run serves until ctx ends or the UI fails, then stops the server.
func (s *TemporalServer) Run(ctx context.Context) error {
	var err error
	select {
	case <-ctx.Done():
	case err = <-s.a.uiErrors():
	}
	s.Stop()
	return err
}

// Stop stops the server.
func (s *TemporalServer) Stop() { s.a.stop(context.Background()) }
