package app

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/worker"

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
	a.worker = worker.New(a.Temporal, contract.TaskQueue, worker.Options{})
	workflows.Register(a.worker, prov)
	siteConfig, err := a.buildSiteConfig(ctx, publicURL, host)
	if err != nil {
		return err
	}
	workflows.RegisterSiteConfig(a.worker, siteConfig)
	if err = a.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return err
	}
	stopBlobs, stopSends := a.startBlobSweeper(blobs), a.startStaleSendSweeper()
	a.startProvisioningSweeper(func(shutdown context.Context) {
		stopBlobs(shutdown)
		stopSends(shutdown)
	})
	return nil
}
