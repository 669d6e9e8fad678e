package app

import (
	"context"
	"fmt"
	"path/filepath"

	"holdco/activities"
	"holdco/providers/ads"
	"holdco/providers/registrar"
	"holdco/service/growth"
	"holdco/workflows"
)

// growthProviders builds the local registrar and the ads simulator: both
// keep their records under the data dir, shared by the api (search,
// panel) and worker (orders, campaigns) processes like the local blob
// store. A real registrar or ads network adapter replaces them here.
func (a *App) growthProviders() (growth.Registrar, growth.Ads, error) {
	reg, err := registrar.NewLocal(filepath.Join(a.cfg.DataDir, "registrar"), a.cfg.Growth.RegistrarDelay, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	sim, err := ads.NewSimulator(filepath.Join(a.cfg.DataDir, "ads"), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	return reg, sim, nil
}

// registerGrowth adds the domain purchase workflow and the ad reconciler
// to the worker and starts their sweeper; the returned function stops it.
func (a *App) registerGrowth(ctx context.Context, publicURL, sitesURL string) (func(context.Context), error) {
	svc, _, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, err
	}
	workflows.RegisterGrowth(a.worker, &activities.Domains{Store: a.Store, Growth: svc.Growth},
		&activities.AdReconciler{Store: a.Store, Growth: svc.Growth})
	sweepCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sw := &growth.Sweeper{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "growth-sweeper")}
	go func() {
		defer close(done)
		sw.Run(sweepCtx, growth.SweepEvery)
	}()
	return func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}, nil
}
