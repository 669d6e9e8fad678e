package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"holdco/service"
	"holdco/store"
)

const adminUsage = `Usage:
  holdco admin create-token --name NAME   mint an admin credential (printed once)
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
		cfg, logger, err := load(getenv, stderr)
		if err != nil {
			return err
		}
		s, err := store.Open(ctx, cfg.DatabaseURL, logger)
		if err != nil {
			return fmt.Errorf("DATABASE_URL: %w", err)
		}
		defer s.Close()
		if err := s.Migrate(ctx); err != nil {
			return fmt.Errorf("DATABASE_URL: migrate: %w", err)
		}
		svc, err := service.New(ctx, service.Config{PublicURL: cfg.ResolvePublicURL(cfg.APIAddr), FrontendURL: cfg.FrontendURL, SecretKey: []byte(cfg.SecretKey)}, s, nil, logger, service.Options{})
		if err != nil {
			return err
		}
		raw, err := svc.CreateAdminToken(ctx, *name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, raw)
		fmt.Fprintln(stderr, "Admin token created. It is shown only this once; store it in a secret manager.")
		return nil
	}
	fmt.Fprint(stderr, adminUsage)
	return fmt.Errorf("admin: unknown subcommand %q", args[0])
}
