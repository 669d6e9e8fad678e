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
// Before the second run it prints the line "testexec: postgres pass", and
// after each run "testexec: <pass> pass took <seconds> s, cpu <seconds> s
// (exit <code>)", which scripts/testtimes reads to split `go test -json`
// output into passes. The CPU time is the run's user and system time,
// with that of the processes it started and waited for (the tests'
// Temporal server, Chromium, Node scripts, stripe-mock). It exits with the first non-zero exit code.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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
			if p := current.Load(); p != nil {
				_ = p.Signal(sig)
			}
		}
	}()

	code := run("sqlite", os.Args[1], os.Args[2:], "")
	if url := os.Getenv("HOLDCO_PG_URL"); url != "" && inPostgresPass() {
		fmt.Println("testexec: postgres pass")
		if c := run("postgres", os.Args[1], os.Args[2:], url); code == 0 {
			code = c
		}
	}
	os.Exit(code)
}

// current is the run in progress.
var current atomic.Pointer[os.Process]

// run runs the binary on one database and says how long it took.
func run(pass, bin string, args []string, databaseURL string) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
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
		current.Store(cmd.Process)
		err = cmd.Wait()
		current.Store(nil)
	}
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		} else {
			fmt.Fprintf(os.Stderr, "testexec: %s pass: %v\n", pass, err)
		}
	}
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	fmt.Printf("testexec: %s pass took %.3f s, cpu %.3f s (exit %d)\n", pass, time.Since(start).Seconds(), cpu.Seconds(), code)
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
