package app

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// startWorker builds the worker role's adapters (provisioning's git
// repositories, hosting and company databases, with the company-database
// admin pool on Postgres), registers the workflows and activities, and
// starts the worker and the provisioning sweeper. publicURL and sitesURL
// are what provisioned sites are told: the API's address and their own.
func (a *App) startWorker(ctx context.Context, publicURL, sitesURL string) error {
	prov, host, err := a.buildProvisioning(ctx, sitesURL)
	if err != nil {
		return err
	}
	// Interrupts reach a model call at its next heartbeat: send them at
	// least every second.
	a.worker = worker.New(a.Temporal, contract.TaskQueue, worker.Options{MaxHeartbeatThrottleInterval: time.Second})
	workflows.Register(a.worker, prov)
	turns, err := a.buildTurns(ctx, publicURL, sitesURL)
	if err != nil {
		return err
	}
	workflows.RegisterTurns(a.worker, turns)
	prov.Schedules = a.Service.Schedules
	prov.FirstPasses = a.Service.Founding
	workflows.RegisterFounding(a.worker, &activities.Founding{Store: a.Store, Founding: a.Service.Founding, Model: turns.Model})
	workflows.RegisterAutoTopUp(a.worker, &activities.AutoTopUps{Store: a.Store, Billing: a.Service.Billing})
	siteConfig, err := a.buildSiteConfig(ctx, publicURL, host)
	if err != nil {
		return err
	}
	workflows.RegisterSiteConfig(a.worker, siteConfig)
	stopGrowth, err := a.registerGrowth(ctx, publicURL, sitesURL)
	if err != nil {
		return err
	}
	if err = a.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return err
	}
	stopBlobs, stopSends, stopTurns := a.startBlobSweeper(blobs), a.startStaleSendSweeper(), a.startTurnSweeper()
	stopFoundings, stopCodes := a.startFoundingSweeper(), a.startCodeSweeper()
	a.startProvisioningSweeper(func(shutdown context.Context) {
		stopFoundings(shutdown)
		stopCodes(shutdown)
		stopBlobs(shutdown)
		stopSends(shutdown)
		stopTurns(shutdown)
		stopGrowth(shutdown)
	})
	return nil
}

// buildTurns builds the agent turns' activities: the configured language
// model and the use cases their tools call.
func (a *App) buildTurns(ctx context.Context, publicURL, sitesURL string) (*activities.Turns, error) {
	svc, _, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, err
	}
	model, err := newModel(a.cfg.LLM)
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_LLM_PROVIDER: %w", err)
	}
	return &activities.Turns{Store: a.Store, Billing: svc.Billing, Tools: svc.Tools, Model: model, Traces: svc.TraceWriter, Scheduled: svc.Turns,
		MaxOutputTokens: a.cfg.LLM.MaxTokens, Logger: a.logger.With("component", "turns")}, nil
}
