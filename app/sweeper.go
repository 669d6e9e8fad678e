package app

import (
	"context"

	"holdco/service/background"
	"holdco/service/companies"
	"holdco/service/files"
	"holdco/service/founding"
	"holdco/service/growth"
	"holdco/service/identity"
	"holdco/service/mail"
	"holdco/service/turns"
)

// count adapts a sweep's count to a pass's.
func count[N int | int64](n N, err error) (int64, error) { return int64(n), err }

// sweepRunner runs sweeps once per cluster: while this process holds
// their leases in the database.
func (a *App) sweepRunner() *background.Runner {
	return &background.Runner{Leases: a.Store, Holder: background.NewHolder(), Logger: a.logger.With("component", "sweeps")}
}

// startSweepers runs the worker role's background sweeps, each once per
// cluster (see service/background): the provisioning outbox, turns and
// founding interviews whose start a crash lost, growth's starts and
// signals and unpaid domain checkouts, outbound messages left sending,
// expired sign-in codes and orphaned blobs. They stop at shutdown,
// before the worker does.
func (a *App) startSweepers(blobs files.BlobStore, engine *turns.Engine) {
	outbox := &companies.ProvisioningOutbox{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "provisioning-sweeper")}
	turnSweeper := &turns.Sweeper{Store: a.Store, Temporal: a.Temporal, Engine: engine, Logger: a.logger.With("component", "turn-sweeper")}
	foundings := &founding.Sweeper{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "founding-sweeper")}
	grow := &growth.Sweeper{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "growth-sweeper")}
	sends := &mail.StaleSendSweeper{Store: a.Store, Logger: a.logger.With("component", "stale-send-sweeper")}
	codes := &identity.CodeSweeper{Store: a.Store, Logger: a.logger.With("component", "sign-in-code-sweeper")}
	blobSweeper := &files.BlobSweeper{Store: a.Store, Blobs: blobs, Logger: a.logger.With("component", "blob-sweeper")}
	a.stopSweeper = a.sweepRunner().Start(
		background.Sweep{Name: "provisioning_outbox", Every: companies.SweepInterval, Done: "provisioning sweep: started pending provisioning",
			Pass: func(ctx context.Context) (int64, error) { return count(outbox.Sweep(ctx, companies.SweepGrace)) }},
		background.Sweep{Name: "turns", Every: turns.SweepEvery, Done: "turn sweep: started turns a crash left queued, ended turns whose workflow was gone",
			Pass: func(ctx context.Context) (int64, error) { return count(turnSweeper.Sweep(ctx, turns.SweepGrace)) }},
		background.Sweep{Name: "foundings", Every: founding.SweepEvery, Done: "founding sweep: started interviews",
			Pass: func(ctx context.Context) (int64, error) { return count(foundings.Sweep(ctx, founding.SweepGrace)) }},
		background.Sweep{Name: "growth", Every: growth.SweepEvery, Done: "growth sweep: started or signalled what a crash left behind",
			Pass: func(ctx context.Context) (int64, error) { return count(grow.Sweep(ctx, growth.SweepGrace)) }},
		background.Sweep{Name: "domain_checkouts", Every: growth.SweepEvery, Done: "growth sweep: unpaid domain checkouts expired",
			Pass: grow.ExpireCheckouts},
		background.Sweep{Name: "stale_sends", Every: mail.StaleSweepEvery, Done: "outbound messages left sending marked unknown",
			Pass: sends.Sweep},
		background.Sweep{Name: "sign_in_codes", Every: identity.CodeSweepEvery, Done: "expired sign-in codes deleted",
			Pass: codes.Sweep},
		background.Sweep{Name: "blobs", Every: files.BlobSweepInterval, Done: "blob sweep: deleted orphaned blobs and partial uploads",
			Pass: func(ctx context.Context) (int64, error) { return count(blobSweeper.Sweep(ctx)) }},
	)
}
