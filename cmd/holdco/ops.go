package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"holdco/app"
	"holdco/config"
)

// standaloneTemporal runs the embedded Temporal development server alone
// until Ctrl-C/SIGTERM: several holdco processes on one machine (an api, a
// worker, …) share it through TEMPORAL_ADDRESS. Flags override
// HOLDCO_TEMPORAL_HOST, HOLDCO_TEMPORAL_PORT and HOLDCO_TEMPORAL_UI_PORT.
func standaloneTemporal(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, logger, err := load(getenv, stderr)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("temporal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Temporal.Host, "host", cfg.Temporal.Host, "IP the server and its UI bind to (HOLDCO_TEMPORAL_HOST)")
	fs.IntVar(&cfg.Temporal.Port, "port", cfg.Temporal.Port, "frontend (gRPC) port (HOLDCO_TEMPORAL_PORT)")
	fs.IntVar(&cfg.Temporal.UIPort, "ui-port", cfg.Temporal.UIPort, "Web UI port, 0 for none (HOLDCO_TEMPORAL_UI_PORT)")
	fs.StringVar(&cfg.Temporal.Namespace, "namespace", cfg.Temporal.Namespace, "namespace to create (TEMPORAL_NAMESPACE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("temporal: unexpected argument %q", fs.Arg(0))
	}
	if !cfg.Temporal.Embedded() {
		return errors.New("TEMPORAL_ADDRESS: holdco temporal runs a server of its own; unset TEMPORAL_ADDRESS for it")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := app.StartTemporal(ctx, cfg, logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Temporal development server ready: TEMPORAL_ADDRESS=%s TEMPORAL_NAMESPACE=%s\n", srv.Address(), cfg.Temporal.Namespace)
	if ui := srv.UIAddress(); ui != "" {
		fmt.Fprintf(stdout, "Web UI: http://%s\n", ui)
	}
	if err := srv.Run(ctx); err != nil {
		return fmt.Errorf("HOLDCO_TEMPORAL_UI_PORT: Temporal UI stopped: %w", err)
	}
	return nil
}

// healthURL is what a role's health check asks, on this machine: the
// /health of its listener, or — for the roles without one (worker, and
// sites whose listener serves tenant paths) — the metrics listener.
func healthURL(cfg config.Config, role string) (string, error) {
	var setting, addr, path string
	switch app.Role(role) {
	case app.RoleAPI:
		setting, addr, path = "HOLDCO_API_ADDR", cfg.API.Addr, "/health"
	case app.RoleMCP:
		setting, addr, path = "HOLDCO_MCP_ADDR", cfg.MCP.Addr, "/health"
	case app.RoleOAuth:
		setting, addr, path = "HOLDCO_OAUTH_ADDR", cfg.OAuth.Addr, "/health"
	case app.RoleSites:
		setting, addr, path = "HOLDCO_SITES_ADDR", cfg.Sites.Addr, "/_ready"
	case app.RoleWorker:
		setting, addr, path = "HOLDCO_WORKER_HEALTH_ADDR", cfg.Worker.HealthAddr, "/ready"
	default:
		_, err := app.ParseRoles(role)
		return "", err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// healthcheck exits 0 when the process answers its health check with 200
// (the container image's HEALTHCHECK; the image has no curl).
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	role := fs.String("role", string(app.RoleAPI), "the role whose health is asked: api, mcp, oauth, sites or worker")
	url := fs.String("url", "", "ask this URL instead")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target := *url
	if target == "" {
		cfg, err := config.Load(getenv)
		if err != nil {
			return err
		}
		if target, err = healthURL(cfg, strings.TrimSpace(*role)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", target, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
