// Command temporaldev is the tests' Temporal server: holdco's embedded
// single-process server (package devserver) alone, state in memory, in a
// process of its own. testenv.NewTemporal starts one per test binary, so
// that test binaries do not link Temporal's server (about a thousand
// packages) and the race detector does not interleave the server's
// goroutines with the test's. It is built without -race: under the race
// detector the server took three times the CPU.
// (`holdco temporal` is the one to run by hand: it keeps its state in the
// data directory and serves the Web UI.)
//
// It starts with no namespace: each test registers its own. It prints one
// line, "listening <host:port>", once the frontend accepts
// connections, and serves until SIGINT or SIGTERM or, with -stdin, until
// its standard input closes: a parent that dies takes it along.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"holdco/devserver"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "temporaldev:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("temporaldev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "127.0.0.1", "IP address every listener binds to")
	port := fs.Int("port", 0, "frontend gRPC port clients dial (0: a free one)")
	refresh := fs.Duration("namespace-refresh", 0, "how soon a namespace registered later reaches every service (0: Temporal's 2 s)")
	level := fs.String("log-level", "error", "the server's log level: debug, info, warn or error")
	untilEOF := fs.Bool("stdin", false, "also stop when standard input closes")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var logLevel slog.Level
	if err := logLevel.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("-port: %d is not a TCP port (0 to 65535)", *port)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	srv, err := devserver.Start(ctx, devserver.Options{
		Host:                  *host,
		FrontendPort:          *port,
		Logger:                logger,
		LogLevel:              logLevel,
		NamespaceCacheRefresh: *refresh,
	})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "listening %s\n", srv.Address()); err != nil {
		srv.Stop()
		return err
	}
	if *untilEOF {
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(stdin))
			stop()
		}()
	}
	<-ctx.Done()
	// The server's own shutdown waits for its services; bound it.
	done := make(chan struct{})
	go func() { srv.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return nil
}
