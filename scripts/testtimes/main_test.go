package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One go test -json run through testexec: each package's events after
// "testexec: postgres pass" are the Postgres pass's, and each pass's
// package time is testexec's, not the combined end event's.
func TestReadSplitsTestexecPasses(t *testing.T) {
	lines := []string{
		`{"Time":"2026-11-29T01:00:00Z","Action":"start","Package":"holdco/store"}`,
		`{"Time":"2026-11-29T01:00:01Z","Action":"run","Package":"holdco/store","Test":"TestA"}`,
		`{"Time":"2026-11-29T01:00:02Z","Action":"pass","Package":"holdco/store","Test":"TestA","Elapsed":1.5}`,
		`{"Time":"2026-11-29T01:00:02Z","Action":"output","Package":"holdco/store","Output":"testexec: sqlite pass took 2.000 s, cpu 3.500 s (exit 0)\n"}`,
		`{"Time":"2026-11-29T01:00:02Z","Action":"output","Package":"holdco/store","Output":"testexec: postgres pass\n"}`,
		`{"Time":"2026-11-29T01:00:03Z","Action":"run","Package":"holdco/store","Test":"TestA"}`,
		`{"Time":"2026-11-29T01:00:04Z","Action":"output","Package":"holdco/store","Test":"TestA","Output":"boom\n"}`,
		`{"Time":"2026-11-29T01:00:05Z","Action":"fail","Package":"holdco/store","Test":"TestA","Elapsed":2.5}`,
		`{"Time":"2026-11-29T01:00:05Z","Action":"output","Package":"holdco/store","Output":"testexec: postgres pass took 3.000 s (exit 1)\n"}`,
		`{"Time":"2026-11-29T01:00:05Z","Action":"fail","Package":"holdco/store","Elapsed":5.1}`,
		`{"Time":"2026-11-29T01:00:00Z","Action":"run","Package":"holdco/config","Test":"TestB"}`,
		`{"Time":"2026-11-29T01:00:01Z","Action":"pass","Package":"holdco/config","Test":"TestB","Elapsed":0.2}`,
		`{"Time":"2026-11-29T01:00:01Z","Action":"output","Package":"holdco/config","Output":"testexec: sqlite pass took 0.300 s (exit 0)\n"}`,
		`{"Time":"2026-11-29T01:00:01Z","Action":"pass","Package":"holdco/config","Elapsed":0.4}`,
	}
	file := filepath.Join(t.TempDir(), "times.json")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	passes, err := read("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	if len(passes) != 2 || passes[0].label != "sqlite" || passes[1].label != "postgres" {
		t.Fatalf("passes: %d", len(passes))
	}
	sqlite, pg := passes[0], passes[1]
	if got := sqlite.packages["holdco/store"]; got != (result{2, "pass", 3.5}) {
		t.Errorf("sqlite store: %+v", got)
	}
	if got := sqlite.packages["holdco/config"]; got != (result{seconds: 0.3, action: "pass"}) {
		t.Errorf("sqlite config: %+v", got)
	}
	if got := pg.packages["holdco/store"]; got != (result{seconds: 3, action: "fail"}) {
		t.Errorf("postgres store: %+v", got)
	}
	if _, ok := pg.packages["holdco/config"]; ok {
		t.Error("config is not in the postgres pass")
	}
	if got := sqlite.tests["store.TestA"]; got != (result{seconds: 1.5, action: "pass"}) {
		t.Errorf("sqlite TestA: %+v", got)
	}
	if got := pg.tests["store.TestA"]; got != (result{seconds: 2.5, action: "fail"}) {
		t.Errorf("postgres TestA: %+v", got)
	}
	if len(pg.failedOutput) != 1 || pg.failedOutput[0].output != "boom\n" {
		t.Errorf("postgres failures: %+v", pg.failedOutput)
	}
}
