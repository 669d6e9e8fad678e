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
// By default it keeps its state in memory and starts with no namespace:
// each test registers its own. With -db and -namespace it is the embedded
// default's server as `holdco serve` runs it (app's tests of it), state in
// the file, the namespace with holdco's search attributes, the Web UI on
// -ui-port. It prints one line once the frontend accepts connections,
// "listening <host:port>" (followed by " ui <host:port>" with a UI), or
// "port-in-use <port>" when a port it was given is taken, and serves
// until SIGINT or SIGTERM or, with -stdin, until its standard input
// closes: a parent that dies takes it along.
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

	enumspb "go.temporal.io/api/enums/v1"

	"holdco/devserver"
	"holdco/workflows/contract"
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
	uiPort := fs.Int("ui-port", 0, "the Web UI's port (0: no UI)")
	db := fs.String("db", "", "SQLite file that keeps the server's state (empty: in memory)")
	namespace := fs.String("namespace", "", "namespace created at start with holdco's search attributes (required with -db)")
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
	for _, p := range []struct {
		flag string
		port int
	}{{"-port", *port}, {"-ui-port", *uiPort}} {
		if p.port < 0 || p.port > 65535 {
			return fmt.Errorf("%s: %d is not a TCP port (0 to 65535)", p.flag, p.port)
		}
	}
	if *db != "" && *namespace == "" {
		return errors.New("-db needs -namespace")
	}
	var attrs map[string]enumspb.IndexedValueType
	if *namespace != "" {
		attrs = contract.SearchAttributes()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	srv, err := devserver.Start(ctx, devserver.Options{
		DatabaseFile:          *db,
		Host:                  *host,
		FrontendPort:          *port,
		UIPort:                *uiPort,
		Namespace:             *namespace,
		SearchAttributes:      attrs,
		Logger:                logger,
		LogLevel:              logLevel,
		NamespaceCacheRefresh: *refresh,
	})
	var inUse *devserver.PortInUseError
	if errors.As(err, &inUse) {
		// The parent reads the first line.
		_, _ = fmt.Fprintf(stdout, "port-in-use %d\n", inUse.Port)
		return err
	}
	if err != nil {
		return err
	}
	line := "listening " + srv.Address()
	if srv.UIAddress() != "" {
		line += " ui " + srv.UIAddress()
	}
	if _, err := fmt.Fprintln(stdout, line); err != nil {
		srv.Stop()
		return err
	}
	if *untilEOF {
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(stdin))
			stop()
		}()
	}
	var uiErr error
	select {
	case <-ctx.Done():
	case uiErr = <-srv.UIErrors():
		uiErr = fmt.Errorf("the Web UI stopped: %w", uiErr)
	}
	// The server's own shutdown waits for its services; bound it.
	done := make(chan struct{})
	go func() { srv.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return uiErr
}
