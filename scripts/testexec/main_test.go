package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The test binary plays the test binary testexec runs when fakeEnv is set:
// it prints the pass it runs (its TEST_DATABASE_URL), exits with
// FAKE_EXIT_<pass>, and, given FAKE_SYNC, the SQLite run waits until the
// Postgres run has started (a file it creates) so that the two must run
// side by side to end.
const fakeEnv = "TESTEXEC_FAKE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "" {
		os.Exit(m.Run())
	}
	pass := "sqlite"
	if os.Getenv("TEST_DATABASE_URL") != "" {
		pass = "postgres"
	}
	fmt.Printf("=== RUN %s\n", pass)
	fmt.Fprintf(os.Stderr, "stderr of %s\n", pass)
	if dir := os.Getenv("FAKE_SYNC"); dir != "" {
		started := filepath.Join(dir, "postgres-started")
		if pass == "postgres" {
			_ = os.WriteFile(started, nil, 0o600)
		} else {
			deadline := time.Now().Add(time.Minute)
			for !exists(started) {
				if time.Now().After(deadline) {
					fmt.Println("the postgres run never started beside this one")
					os.Exit(3)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	fmt.Printf("--- PASS %s\n", pass)
	code := 0
	_, _ = fmt.Sscan(os.Getenv("FAKE_EXIT_"+pass), &code)
	os.Exit(code)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fake sets up a run of this binary as the test binary of a package in
// the Postgres pass.
func fake(t *testing.T) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeEnv, "1")
	t.Setenv("HOLDCO_PG_URL", "postgres://example/test")
	t.Setenv("HOLDCO_PG_ROOT", wd)
	t.Setenv("HOLDCO_PG_PKGS", "./")
}

// execFake runs testexec on this binary as the test binary and returns
// its exit code and its output (stdout and stderr).
func execFake() (int, string) {
	var out bytes.Buffer
	code := execute(os.Args[0], nil, nil, &out, &out)
	return code, out.String()
}

var took = regexp.MustCompile(`(?m)^testexec: (\w+) pass took [0-9.]+ s, cpu [0-9.]+ s \(exit (\d+)\)$`)

func TestPassesOneAfterTheOther(t *testing.T) {
	fake(t)
	t.Setenv("FAKE_EXIT_postgres", "4")
	code, out := execFake()
	if code != 4 {
		t.Errorf("exit %d, want the Postgres run's 4", code)
	}
	assertPasses(t, out, "0", "4")
}

func TestPassesSideBySideReadAsOneAfterTheOther(t *testing.T) {
	fake(t)
	t.Setenv("HOLDCO_PG_CONCURRENT", "1")
	t.Setenv("FAKE_SYNC", t.TempDir())
	t.Setenv("FAKE_EXIT_sqlite", "5")
	t.Setenv("FAKE_EXIT_postgres", "6")
	code, out := execFake()
	if code != 5 {
		t.Errorf("exit %d, want the SQLite run's 5 (the first non-zero)", code)
	}
	assertPasses(t, out, "5", "6")
	// The Postgres run's stderr is held with its output.
	if i, j := strings.Index(out, "testexec: postgres pass"), strings.Index(out, "stderr of postgres"); j < i {
		t.Errorf("the Postgres run's stderr is not after its pass line:\n%s", out)
	}
}

func TestWithoutPostgresOnlySQLiteRuns(t *testing.T) {
	fake(t)
	t.Setenv("HOLDCO_PG_URL", "")
	code, out := execFake()
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(out, "postgres") {
		t.Errorf("a Postgres run without HOLDCO_PG_URL:\n%s", out)
	}
}

// assertPasses checks that out reads as the SQLite run, the pass line,
// then the Postgres run, each ended by its took line with its exit code.
func assertPasses(t *testing.T, out, sqliteExit, postgresExit string) {
	t.Helper()
	want := []string{"=== RUN sqlite", "--- PASS sqlite", "testexec: sqlite pass took", "testexec: postgres pass", "=== RUN postgres", "--- PASS postgres", "testexec: postgres pass took"}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, out)
		}
		at += i + len(w)
	}
	m := took.FindAllStringSubmatch(out, -1)
	if len(m) != 2 || m[0][1] != "sqlite" || m[0][2] != sqliteExit || m[1][1] != "postgres" || m[1][2] != postgresExit {
		t.Errorf("took lines %v, want sqlite exit %s then postgres exit %s", m, sqliteExit, postgresExit)
	}
}
