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
// The two runs go side by side; the Postgres run's output is held and
// written after the SQLite run's, behind the line "testexec: postgres
// pass". After each run's output comes "testexec: <pass> pass took
// <seconds> s (exit <code>)". scripts/testtimes reads these lines to split
// `go test -json` output into passes. testexec exits with the first
// non-zero exit code.
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
	// the goroutines' stacks) or an interrupt: the runs in progress get
	// it, and testexec waits for them to end.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	go func() {
		for sig := range signals {
			running.Range(func(p, _ any) bool {
				_ = p.(*os.Process).Signal(sig)
				return true
			})
		}
	}()

	bin, args := os.Args[1], os.Args[2:]
	// The two runs go side by side: the one package's tests wait on
	// timers, workflows, browsers and Postgres as much as they compute,
	// and the slowest package (app) would otherwise hold its go test slot
	// for both runs in a row. The Postgres run's output is held and
	// written after the SQLite run's, so that each reads as one run.
	var pg *testRun
	var held bytes.Buffer
	if url := os.Getenv("HOLDCO_PG_URL"); url != "" && inPostgresPass() {
		pg = start("postgres", bin, args, url, nil, &held)
	}
	code := start("sqlite", bin, args, "", os.Stdin, os.Stdout).wait()
	if pg != nil {
		c := pg.wait()
		fmt.Println("testexec: postgres pass")
		_, _ = os.Stdout.Write(held.Bytes())
		pg.report(c)
		if code == 0 {
			code = c
		}
	}
	os.Exit(code)
}

// running is the runs in progress (their *os.Process), for the signals.
var running sync.Map

type testRun struct {
	pass  string
	cmd   *exec.Cmd
	start time.Time
	took  time.Duration
	err   error
}

// start starts the binary on one database (databaseURL, or SQLite when
// empty), its output to out.
func start(pass, bin string, args []string, databaseURL string, in io.Reader, out io.Writer) *testRun {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TEST_DATABASE_URL=")
	})
	if databaseURL != "" {
		env = append(env, "TEST_DATABASE_URL="+databaseURL)
	}
	cmd.Env = env
	// A testexec killed (go test's last resort after a timeout) takes
	// the runs with it.
	cmd.SysProcAttr = dieWithParent()
	r := &testRun{pass: pass, cmd: cmd, start: time.Now()}
	if r.err = cmd.Start(); r.err == nil {
		running.Store(cmd.Process, nil)
	}
	return r
}

// wait waits for the run to end and returns its exit code; the SQLite
// run also says how long it took (the Postgres run's report follows its
// held output).
func (r *testRun) wait() int {
	err := r.err
	if err == nil {
		err = r.cmd.Wait()
		running.Delete(r.cmd.Process)
	}
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		} else {
			fmt.Fprintf(r.cmd.Stdout, "testexec: %s pass: %v\n", r.pass, err)
		}
	}
	r.took = time.Since(r.start)
	if r.pass == "sqlite" {
		r.report(code)
	}
	return code
}

// report prints the line scripts/testtimes reads the run's time from.
func (r *testRun) report(code int) {
	fmt.Printf("testexec: %s pass took %.3f s (exit %d)\n", r.pass, r.took.Seconds(), code)
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
