package app

import (
	"context"

	"holdco/service/companies"
	"holdco/service/identity"
	"holdco/service/mail"
	"holdco/service/turns"
)

// startProvisioningSweeper runs the provisioning outbox's sweeper on the
// worker role: it starts provisioning of companies whose creation was
// committed but whose workflow never started (a crash or an unreachable
// Temporal between the two). It stops before the worker does.
func (a *App) startProvisioningSweeper(stopOthers func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	outbox := &companies.ProvisioningOutbox{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "provisioning-sweeper")}
	go func() {
		defer close(done)
		outbox.RunSweeper(ctx, companies.SweepInterval)
	}()
	a.stopSweeper = func(shutdown context.Context) {
		cancel()
		select { // a sweep's starts end with ctx; the shutdown deadline bounds the rest
		case <-done:
		case <-shutdown.Done():
		}
		stopOthers(shutdown)
	}
}

// startStaleSendSweeper marks outbound messages that a stopped process left
// `sending` as `unknown` (worker role); the returned function stops it.
func (a *App) startStaleSendSweeper() func(context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sw := &mail.StaleSendSweeper{Store: a.Store, Logger: a.logger.With("component", "stale-send-sweeper")}
	go func() {
		defer close(done)
		sw.Run(ctx, mail.StaleSweepEvery)
	}()
	return func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}
}

// startTurnSweeper starts agent turns whose workflow start a crash lost
// (worker role); the returned function stops it.
func (a *App) startTurnSweeper() func(context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sw := &turns.Sweeper{Store: a.Store, Temporal: a.Temporal, Logger: a.logger.With("component", "turn-sweeper")}
	go func() {
		defer close(done)
		sw.Run(ctx, turns.SweepEvery)
	}()
	return func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}
}

// startCodeSweeper deletes expired sign-in codes (login, CLI and device
// codes; worker role); the returned function stops it.
func (a *App) startCodeSweeper() func(context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sw := &identity.CodeSweeper{Store: a.Store, Logger: a.logger.With("component", "sign-in-code-sweeper")}
	go func() {
		defer close(done)
		sw.Run(ctx, identity.CodeSweepEvery)
	}()
	return func(shutdown context.Context) {
		cancel()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}
}
