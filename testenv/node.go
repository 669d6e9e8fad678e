package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The end-to-end tests that run Node scripts (scripts/e2e/<name>: the
// official MCP clients, oauth4webapi, posthog-js, playwright-core on
// Debian's Chromium) share one behaviour when something is missing: under
// CI=true (`make test` installs node's packages and Chromium first) the
// test fails; otherwise it is skipped with what to run. Tests never run
// npm themselves: `make e2e-deps` installs every script directory once
// from its committed package-lock.json.

// missing fails the test under CI and skips it otherwise.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: `make test` installs it, so this is a failure)", args...)
	}
	t.Skipf(format, args...)
}

// NodeScripts returns the directory of scripts/e2e/<name> once node is on
// PATH and the directory's packages are installed from its lock file
// (node_modules/.package-lock.json, written by npm ci, no older than
// package-lock.json); otherwise the test fails under CI and is skipped
// with the command to run.
func NodeScripts(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "scripts", "e2e", name)
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not installed: the scripts in scripts/e2e/%s need Node 20 (apt-get install nodejs npm, then `make e2e-deps`)", name)
	}
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatalf("testenv: scripts/e2e/%s has no package-lock.json: %v", name, err)
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	switch {
	case err != nil:
		missing(t, "the packages of scripts/e2e/%s are not installed: run `make e2e-deps`", name)
	case installed.ModTime().Before(lock.ModTime()):
		missing(t, "the packages of scripts/e2e/%s are older than its package-lock.json: run `make e2e-deps`", name)
	}
	return dir
}

// RunNode runs `node args...` in dir with env added, bounded by twice
// EventualBound (a bound, not an expectation), and returns its standard
// output; a failure fails the test with both outputs.
func RunNode(t testing.TB, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*EventualBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	t.Logf("node %v:\n%s%s", args, stdout.String(), stderr.String())
	return stdout.Bytes()
}

// Chromium is the system's Chromium (CHROMIUM, else Debian's
// /usr/bin/chromium), which playwright-core drives headless; the Makefile
// installs Debian's package when missing. Without it the test fails under
// CI and is skipped otherwise.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	missing(t, "Chromium is not installed (apt-get install -y chromium; `make test` installs it where it can)")
	return ""
}
