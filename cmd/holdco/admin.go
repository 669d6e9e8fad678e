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
	"holdco/service/growth"
	"holdco/service/identity"
	"holdco/store"
)

const adminUsage = `Usage:
  holdco admin create-token --name NAME        mint an admin credential (printed once)
  holdco admin user-auth enable COMPANY_ID     clear the revocation of a company's app sign-in client
  holdco admin grant-credits --conglomerate ID --credits N [--reason TEXT]
                                               add (or with a negative N remove) credits: an ADMIN_ADJUSTMENT
                                               entry, e.g. to try agent turns on a server without payments
`

// admin runs operator commands against the configured database.
func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return errors.New("admin: a subcommand is required")
	}
	switch args[0] {
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
		raw, err := identity.New(core, nil, nil).CreateAdminToken(ctx, *name)
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
		if _, err := s.GetConglomerate(ctx, *cong); err != nil {
			return fmt.Errorf("admin grant-credits: conglomerate %s: %w", *cong, err)
		}
		core, err := service.NewCore(ctx, service.Config{PublicURL: cfg.API.ResolvePublicURL(cfg.API.Addr), FrontendURL: cfg.API.FrontendURL,
			SecretKey: []byte(cfg.Identity.SecretKey)}, s, logger, nil)
		if err != nil {
			return err
		}
		bill := billing.New(core, nil)
		// The growth use cases hook the grant: the account's ad campaigns
		// waiting for credits are marked to reconcile (their outbox), and
		// the worker's growth sweeper signals their reconcilers within
		// seconds: no Temporal connection is needed here.
		growth.New(core, bill, growth.Options{})
		st, err := bill.GrantCredits(ctx, s.SystemConglomerateScope(*cong), models.EntryAdminAdjustment, *credits, *reason)
		if err != nil {
			return fmt.Errorf("admin grant-credits: %w", err)
		}
		fmt.Fprintf(stdout, "balance %d\n", st.Balance)
		return nil
	case "user-auth":
		if len(args) != 3 || args[1] != "enable" {
			fmt.Fprint(stderr, adminUsage)
			return errors.New("admin user-auth: usage: holdco admin user-auth enable COMPANY_ID")
		}
		s, logger, err := openStore(ctx, getenv, stderr)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.EnableCompanyOIDCClient(ctx, s.SystemAdminScope(), args[2]); err != nil {
			return fmt.Errorf("admin user-auth enable %s: %w", args[2], err)
		}
		logger.Info("company app sign-in enabled", "company", args[2])
		return nil
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
