// Command testexec runs a test binary for `go test -exec`, once for each
// database of `make test`: on SQLite (TEST_DATABASE_URL unset), then, for
// a package named in HOLDCO_PG_PKGS when HOLDCO_PG_URL is set, again on
// that Postgres (TEST_DATABASE_URL=HOLDCO_PG_URL). Both passes run the
// same binary: go test compiles and links each package once, and linking
// a test binary that embeds the Temporal server under -race is seconds of
// CPU per package.
//
//	go test -race -exec "$(go env GOPATH)/bin/testexec" ./...
//
// Before the second run's output it prints the line "testexec: postgres
// pass", and after each run's "testexec: <pass> pass took <seconds> s,
// cpu <seconds> s (exit <code>)", which scripts/testtimes reads to split
// `go test -json` output into passes. The CPU time is the run's user and
// system time, with that of the processes it started and waited for (the
// tests' Temporal server, Chromium, Node scripts, stripe-mock). It exits
// with the first non-zero exit code.
//
// With HOLDCO_PG_CONCURRENT set, the two runs go side by side and the
// Postgres run's output is held until the SQLite run has ended, then
// printed whole: the output reads as if they ran one after the other
// (make test leaves it off: docs/benchmarks.md measured it slower).
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testexec <test binary> [flags...]")
		os.Exit(2)
	}
	// go test stops the binary with a signal on a timeout (SIGQUIT, for
	// the goroutines' stacks) or an interrupt: the run in progress gets
	// it, and testexec waits for that run to end.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	go func() {
		for sig := range signals {
			running.signal(sig)
		}
	}()

	os.Exit(execute(os.Args[1], os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs the test binary bin for each pass, its output to stdout
// and stderr, and returns the first non-zero exit code.
func execute(bin string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	url := os.Getenv("HOLDCO_PG_URL")
	if url == "" || !inPostgresPass() {
		return run("sqlite", bin, args, "", stdin, stdout, stderr)
	}
	if os.Getenv("HOLDCO_PG_CONCURRENT") == "" {
		code := run("sqlite", bin, args, "", stdin, stdout, stderr)
		fmt.Fprintln(stdout, "testexec: postgres pass")
		return first(code, run("postgres", bin, args, url, stdin, stdout, stderr))
	}
	var held bytes.Buffer
	pg := make(chan int, 1)
	go func() { pg <- run("postgres", bin, args, url, nil, &held, &held) }()
	code := run("sqlite", bin, args, "", stdin, stdout, stderr)
	pgCode := <-pg
	fmt.Fprintln(stdout, "testexec: postgres pass")
	_, _ = held.WriteTo(stdout)
	return first(code, pgCode)
}

// first is the first non-zero exit code.
func first(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// running are the runs in progress, which get testexec's signals.
var running processes

type processes struct {
	mu  sync.Mutex
	set map[*os.Process]bool
}

func (ps *processes) add(p *os.Process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.set == nil {
		ps.set = map[*os.Process]bool{}
	}
	ps.set[p] = true
}

func (ps *processes) remove(p *os.Process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.set, p)
}

func (ps *processes) signal(sig os.Signal) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for p := range ps.set {
		_ = p.Signal(sig)
	}
}

// run runs the binary on one database, its output (and then how long it
// took) to stdout and stderr.
func run(pass, bin string, args []string, databaseURL string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TEST_DATABASE_URL=")
	})
	if databaseURL != "" {
		env = append(env, "TEST_DATABASE_URL="+databaseURL)
	}
	cmd.Env = env
	// A testexec killed (go test's last resort after a timeout) takes
	// the run with it.
	cmd.SysProcAttr = dieWithParent()
	start := time.Now()
	code := 0
	err := cmd.Start()
	if err == nil {
		running.add(cmd.Process)
		err = cmd.Wait()
		running.remove(cmd.Process)
	}
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		} else {
			fmt.Fprintf(stderr, "testexec: %s pass: %v\n", pass, err)
		}
	}
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	fmt.Fprintf(stdout, "testexec: %s pass took %.3f s, cpu %.3f s (exit %d)\n", pass, time.Since(start).Seconds(), cpu.Seconds(), code)
	return code
}

// inPostgresPass reports whether the package being tested (go test runs
// its binary in the package's directory) is one of HOLDCO_PG_PKGS:
// directories relative to HOLDCO_PG_ROOT, as the Makefile lists them
// ("./store/", "./service/growth/").
func inPostgresPass() bool {
	dir, err := os.Getwd()
	if err != nil {
		return false
	}
	root := os.Getenv("HOLDCO_PG_ROOT")
	for _, p := range strings.Fields(os.Getenv("HOLDCO_PG_PKGS")) {
		abs, err := filepath.Abs(filepath.Join(root, p))
		if err == nil && abs == dir {
			return true
		}
	}
	return false
}
