package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/identity"
	"holdco/store"
)

const adminUsage = `Usage:
  holdco admin create-token --name NAME        mint an admin credential (printed once)
  holdco admin grant-credits --conglomerate ID --credits N [--reason TEXT]
                                               add (or with a negative N remove) credits: an ADMIN_ADJUSTMENT
                                               entry, e.g. to try agent turns on a server without payments
  holdco admin health [COMPANY_ID]             check every company's resources (or one's) against reality
                                               (GET /admin/companies/health; the checks run on a worker)
  holdco admin heal COMPANY_ID                 diagnose a company and re-provision what is failed or missing
                                               (POST /admin/companies/{id}/heal)
  holdco admin user-auth enable COMPANY_ID     clear the revocation of a company's app sign-in client
  holdco admin tasks COMPANY_ID [--status S,…] a company's tasks, newest first (GET /admin/companies/{id}/tasks)
  holdco admin runs RUN_ID trace               an agent run's trace, one JSON event per line (GET /admin/runs/{id}/trace)

  health, heal, user-auth, tasks and runs take --json (the admin endpoint's body). They run the admin
  endpoints' use cases on the configured database (DATABASE_URL) and Temporal (TEMPORAL_ADDRESS, or the
  embedded server of a running holdco serve) as the operator.
`

// admin runs operator commands against the configured database.
func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return errors.New("admin: a subcommand is required")
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminUsage)
		return nil
	case "create-token":
		fs := flag.NewFlagSet("admin create-token", flag.ContinueOnError)
		fs.SetOutput(stderr)
		name := fs.String("name", "", "what the token is for (shown in audit logs)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		cfg, _, err := load(getenv, stderr)
		if err != nil {
			return err
		}
		s, logger, err := openStore(ctx, getenv, stderr)
		if err != nil {
			return err
		}
		defer s.Close()
		core, err := service.NewCore(ctx, service.Config{PublicURL: cfg.API.ResolvePublicURL(cfg.API.Addr), FrontendURL: cfg.API.FrontendURL, SecretKey: []byte(cfg.Identity.SecretKey)}, s, logger, nil)
		if err != nil {
			return err
		}
		raw, err := identity.New(core, nil, nil, nil).CreateAdminToken(ctx, *name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, raw)
		fmt.Fprintln(stderr, "Admin token created. It is shown only this once; store it in a secret manager.")
		return nil
	case "grant-credits":
		fs := flag.NewFlagSet("admin grant-credits", flag.ContinueOnError)
		fs.SetOutput(stderr)
		cong := fs.String("conglomerate", "", "the account (conglomerate id)")
		credits := fs.Int64("credits", 0, "credits to add (negative removes)")
		reason := fs.String("reason", "operator adjustment", "why (kept on the ledger entry)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if _, err := uuid.Parse(*cong); err != nil {
			return errors.New("admin grant-credits: --conglomerate must be a conglomerate id")
		}
		cfg, _, err := load(getenv, stderr)
		if err != nil {
			return err
		}
		s, logger, err := openStore(ctx, getenv, stderr)
		if err != nil {
			return err
		}
		defer s.Close()
		if _, err := s.Identity().GetConglomerate(ctx, *cong); err != nil {
			return fmt.Errorf("admin grant-credits: conglomerate %s: %w", *cong, err)
		}
		core, err := service.NewCore(ctx, service.Config{PublicURL: cfg.API.ResolvePublicURL(cfg.API.Addr), FrontendURL: cfg.API.FrontendURL,
			SecretKey: []byte(cfg.Identity.SecretKey)}, s, logger, nil)
		if err != nil {
			return err
		}
		// Billing alone: the grant marks the account's ad campaigns waiting
		// for credits to resume in its own transaction, and the worker's
		// growth sweeper signals their reconcilers within seconds; no
		// Temporal connection is needed here.
		bill := billing.New(core, billing.Options{})
		st, err := bill.GrantCredits(ctx, s.SystemConglomerateScope(*cong), models.EntryAdminAdjustment, *credits, *reason)
		if err != nil {
			return fmt.Errorf("admin grant-credits: %w", err)
		}
		fmt.Fprintf(stdout, "balance %d\n", st.Balance)
		return nil
	case "health", "heal", "user-auth", "tasks", "runs":
		return operatorCommand(ctx, args[0], args[1:], getenv, stdout, stderr)
	}
	fmt.Fprint(stderr, adminUsage)
	return fmt.Errorf("admin: unknown subcommand %q", args[0])
}

// openStore opens and migrates the configured database.
func openStore(ctx context.Context, getenv func(string) string, stderr io.Writer) (*store.Store, *slog.Logger, error) {
	cfg, logger, err := load(getenv, stderr)
	if err != nil {
		return nil, nil, err
	}
	s, err := store.Open(ctx, cfg.Database.URL, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("DATABASE_URL: migrate: %w", err)
	}
	return s, logger, nil
}
