package app

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/service/turns"
	"holdco/service/usecases"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// startWorker builds the worker role's adapters (provisioning's git
// repositories, hosting and company databases, with the company-database
// admin pool on Postgres), registers the workflows and activities, and
// starts the worker and the background sweeps. publicURL and sitesURL
// are what provisioned sites are told: the API's address and their own.
func (a *App) startWorker(ctx context.Context, publicURL, sitesURL string) error {
	// The companies' resources first: the use cases' tools reach the
	// repositories and databases they open.
	repos, host, dbs, err := a.buildCompanyResources(ctx, sitesURL)
	if err != nil {
		return err
	}
	svc, _, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return err
	}
	// Interrupts reach a model call at its next heartbeat: send them at
	// least every second.
	a.workerIdentity = newWorkerIdentity()
	a.worker = worker.New(a.Temporal, contract.TaskQueue, worker.Options{MaxHeartbeatThrottleInterval: workflows.MaxHeartbeatThrottle(), Identity: a.workerIdentity,
		Interceptors: workflows.WorkerInterceptors()})
	workflows.Register(a.worker, &activities.Provisioning{Store: a.Store, Repositories: repos, Databases: dbs, Hosting: host,
		Schedules: svc.Schedules, FirstPasses: svc.Founding})
	engine, err := a.buildTurns(svc)
	if err != nil {
		return err
	}
	workflows.RegisterTurns(a.worker, &activities.Turns{Store: a.Store, Engine: engine})
	workflows.RegisterFounding(a.worker, &activities.Founding{Store: a.Store, Founding: svc.Founding, Model: engine.Model})
	workflows.RegisterAutoTopUp(a.worker, &activities.AutoTopUps{Store: a.Store, Billing: svc.Billing})
	siteConfig, err := a.buildSiteConfig(ctx, publicURL, host)
	if err != nil {
		return err
	}
	workflows.RegisterSiteConfig(a.worker, siteConfig)
	// The domain purchase workflow and the ad reconciler (their sweeps run
	// with the others: startSweepers).
	workflows.RegisterGrowth(a.worker, &activities.Domains{Store: a.Store, Growth: svc.Growth},
		&activities.AdReconciler{Store: a.Store, Growth: svc.Growth})
	if err = a.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return err
	}
	a.startSweepers(blobs, engine)
	return nil
}

// buildTurns builds the agent turns' engine: the configured language
// model and the use cases their tools call.
func (a *App) buildTurns(svc *usecases.Services) (*turns.Engine, error) {
	model, err := newModel(a.cfg.LLM)
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_LLM_PROVIDER: %w", err)
	}
	engine := &turns.Engine{Store: a.Store, Billing: svc.Billing, Tools: svc.Tools, Model: model, Traces: svc.TraceWriter, Scheduled: svc.Turns,
		MaxOutputTokens: a.cfg.LLM.MaxTokens, Logger: a.logger.With("component", "turns")}
	return engine, nil
}
