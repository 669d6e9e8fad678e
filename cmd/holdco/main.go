// Command holdco is the whole service in one binary: `holdco serve` runs the
// embedded default (or one role of a scaled-out deployment), `holdco migrate`
// runs database migrations alone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"holdco/app"
	"holdco/config"
	"holdco/logging"
	"holdco/store"
	"holdco/usercli"
)

const usage = `holdco — found and run AI-operated companies.

Usage:
  holdco serve [--roles R,...]        run the service: roles api, mcp, oauth, sites, worker (default: all,
                                      with embedded Temporal when TEMPORAL_ADDRESS is empty)
  holdco worker                       run only the Temporal worker (same as serve --roles worker)
  holdco migrate [--rebuild-summaries]
                                      apply database migrations and exit; --rebuild-summaries then makes the
                                      company summaries and their triggers again from the companies' rows
  holdco temporal [--port P] [--ui-port P] [--host IP]
                                      run the Temporal development server alone (state in <data dir>/temporal.db)
                                      for holdco processes on one machine: point their TEMPORAL_ADDRESS at it
  holdco healthcheck [--role R | --url URL]
                                      exit 0 when this machine's process answers its health check (the
                                      container image's HEALTHCHECK): R's /health on its listener (api, mcp,
                                      oauth, sites), or /metrics on HOLDCO_METRICS_ADDR for the worker
  holdco admin create-token --name N  mint an admin credential (printed once); holdco admin help: health, heal,
                                      user-auth enable, tasks, runs, grant-credits
  holdco login [--device] [--api URL] sign in (browser with loopback PKCE, or device code) and store a session key
  holdco logout                       revoke the stored session key and remove it
  holdco whoami [--json]              show who the stored credential is
  holdco tokens list|create|revoke    personal access tokens (create --name N [--expires-in-days D])
  holdco send <business> "message"    message a company's agent (id or handle) and stream its turn until it
                                      ends; --file <file-id> (repeatable) attaches, --session <id> continues
                                      a conversation; Ctrl-C interrupts the turn (exit 130), failed exits 1
  holdco help                         show this text

Configuration is read from the environment; see README.md for every variable.
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "holdco:", err)
		}
		var exit *usercli.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Code)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("a command is required")
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stderr, "")
	case "worker":
		return serve(ctx, args, getenv, stderr, string(app.RoleWorker))
	case "migrate":
		return migrate(ctx, args, getenv, stderr)
	case "temporal":
		return standaloneTemporal(ctx, args, getenv, os.Stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, args, getenv, stderr)
	case "admin":
		return admin(ctx, args, getenv, os.Stdout, stderr)
	case "login", "logout", "whoami", "tokens":
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		e := usercli.DefaultEnv()
		e.Getenv, e.Stderr = getenv, stderr
		return map[string]func(context.Context, usercli.Env, []string) error{
			"login": usercli.Login, "logout": usercli.Logout, "whoami": usercli.Whoami, "tokens": usercli.Tokens,
		}[cmd](ctx, e, args)
	case "send":
		// The first Ctrl-C interrupts the turn; after it the default
		// handler is back, so a second one ends the command at once.
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		go func() { <-ctx.Done(); stop() }()
		e := usercli.DefaultEnv()
		e.Getenv, e.Stderr = getenv, stderr
		return usercli.Send(ctx, e, args)
	case "help", "-h", "--help":
		fmt.Fprint(stderr, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

func load(getenv func(string) string, stderr io.Writer) (config.Config, *slog.Logger, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, logging.New(stderr, cfg.Log.Level, cfg.Log.Format), nil
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, fixedRoles string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := make([]string, len(app.AllRoles))
	for i, r := range app.AllRoles {
		all[i] = string(r)
	}
	rolesFlag := fs.String("roles", strings.Join(all, ","), "comma-separated roles this process runs: "+strings.Join(all, ", "))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fixedRoles != "" {
		*rolesFlag = fixedRoles
	}
	roles, err := app.ParseRoles(*rolesFlag)
	if err != nil {
		return err
	}
	cfg, logger, err := load(getenv, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.Start(ctx, cfg, roles, logger)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rebuild := fs.Bool("rebuild-summaries", false, "then make the company summaries and their triggers again from the companies' rows "+
		"(after moving the database to another schema, or to check the dashboards' figures)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, logger, err := load(getenv, stderr)
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.Database.URL, logger)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("DATABASE_URL: migrate: %w", err)
	}
	logger.Info("migrations applied", "database", config.Redact(cfg.Database.URL))
	if *rebuild {
		if err := s.RebuildCompanySummaries(ctx); err != nil {
			return fmt.Errorf("DATABASE_URL: rebuild the company summaries: %w", err)
		}
		logger.Info("company summaries made again", "database", config.Redact(cfg.Database.URL))
	}
	return nil
}
