// Command testtimes summarises `go test -json` output as Markdown tables:
// the run time of every package and the slowest tests, one column per
// pass. `make times` runs both passes with -json and calls it; its tables
// go to docs/benchmarks.md by hand.
//
//	go run ./scripts/testtimes [-top 40] sqlite=.cache/times-sqlite.json postgres=.cache/times-postgres.json
//
// A package's time is its test binary's run (the "pass"/"fail"/"skip"
// event's Elapsed), not its compilation; a test's time is its own
// Elapsed (subtests are counted in their parent). Failed packages and
// tests are listed under the tables.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type pass struct {
	label        string
	packages     map[string]result // by import path
	tests        map[string]result // by "package.Test" (top-level tests only)
	first        time.Time
	last         time.Time
	output       map[string][]string // the running tests' output, by "package.Test"
	failedOutput []failure           // each failure's output, in order
	runs         map[string]int      // how many times each top-level test ended (-count)
	failedRuns   map[string]int
}

type failure struct {
	test, output string
}

type result struct {
	seconds float64
	action  string  // pass, fail, skip
	cpu     float64 // the test binary's CPU seconds (testexec's line; 0 when not given)
}

func main() {
	top := flag.Int("top", 40, "how many of the slowest tests to list")
	fails := flag.Bool("fails", false, "report failures only, each with its runs and output (make flake)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testtimes [-top N] label=file.json ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var passes []*pass
	for _, arg := range flag.Args() {
		label, file, ok := strings.Cut(arg, "=")
		if !ok {
			label, file = arg, arg
		}
		ps, err := read(label, file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testtimes: %s: %v\n", file, err)
			os.Exit(1)
		}
		passes = append(passes, ps...)
	}
	if *fails {
		if n := writeFailures(os.Stdout, passes); n > 0 {
			os.Exit(1)
		}
		return
	}
	write(os.Stdout, passes, *top)
}

// writeFailures lists every failed test with how many of its runs failed,
// then each failure's output; it returns how many tests failed.
func writeFailures(w io.Writer, passes []*pass) int {
	n := 0
	for _, p := range passes {
		runs := 0
		for _, c := range p.runs {
			runs += c
		}
		var failed []string
		for _, k := range sortedKeys(p.tests) {
			if p.failedRuns[k] > 0 {
				failed = append(failed, fmt.Sprintf("  %s: %d of %d runs failed", k, p.failedRuns[k], p.runs[k]))
			}
		}
		for _, k := range sortedKeys(p.packages) {
			if p.packages[k].action == "fail" && !anyFailedTest(p, short(k)) {
				failed = append(failed, fmt.Sprintf("  package %s failed outside its tests (build, panic or timeout)", short(k)))
			}
		}
		if len(failed) == 0 {
			fmt.Fprintf(w, "%s: no failure in %d test runs of %d tests\n", p.label, runs, len(p.runs))
			continue
		}
		n += len(failed)
		fmt.Fprintf(w, "%s: FAILURES in %d test runs of %d tests:\n%s\n", p.label, runs, len(p.runs), strings.Join(failed, "\n"))
		for _, f := range p.failedOutput {
			fmt.Fprintf(w, "\n--- %s\n%s", f.test, f.output)
		}
	}
	return n
}

func anyFailedTest(p *pass, pkg string) bool {
	for k := range p.failedRuns {
		if strings.HasPrefix(k, pkg+".") {
			return true
		}
	}
	return false
}

func newPass(label string) *pass {
	return &pass{label: label, packages: map[string]result{}, tests: map[string]result{},
		output: map[string][]string{}, runs: map[string]int{}, failedRuns: map[string]int{}}
}

// testexec's lines (scripts/testexec, make test's -exec): a package's
// events after "testexec: postgres pass" belong to the Postgres pass, and
// each pass's run time and CPU time are on its "took" line.
var (
	secondPassLine = "testexec: postgres pass\n"
	tookLine       = regexp.MustCompile(`^testexec: (\w+) pass took ([0-9.]+) s(?:, cpu ([0-9.]+) s)? \(exit (\d+)\)\n$`)
)

// read reads one `go test -json` file as the pass label, and as a second
// pass, "postgres", the events testexec's lines assign to it.
func read(label, file string) ([]*pass, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first := newPass(label)
	var second *pass
	inSecond := map[string]bool{} // packages whose events are the second pass's now
	timed := map[string]bool{}    // packages whose run times testexec gave
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // build output printed outside JSON
		}
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.Action == "output" && e.Test == "" {
			if e.Output == secondPassLine {
				if second == nil {
					second = newPass("postgres")
				}
				inSecond[e.Package] = true
				continue
			}
			if m := tookLine.FindStringSubmatch(e.Output); m != nil {
				p := first
				if inSecond[e.Package] {
					p = second
				}
				secs, _ := strconv.ParseFloat(m[2], 64)
				cpu, _ := strconv.ParseFloat(m[3], 64)
				action := "pass"
				if m[4] != "0" {
					action = "fail"
				}
				p.packages[e.Package] = result{secs, action, cpu}
				timed[e.Package] = true
				continue
			}
		}
		p := first
		if inSecond[e.Package] {
			p = second
		}
		if e.Test == "" && timed[e.Package] && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			// Both runs' end: each pass has its own from testexec.
			p.stretch(e.Time)
			continue
		}
		p.add(e)
	}
	passes := []*pass{first}
	if second != nil {
		passes = append(passes, second)
	}
	return passes, sc.Err()
}

// stretch widens the pass's first-to-last span to t.
func (p *pass) stretch(t time.Time) {
	if t.IsZero() {
		return
	}
	if p.first.IsZero() || t.Before(p.first) {
		p.first = t
	}
	if t.After(p.last) {
		p.last = t
	}
}

// add counts one event in the pass.
func (p *pass) add(e event) {
	p.stretch(e.Time)
	key := short(e.Package) + "." + e.Test
	switch e.Action {
	case "output":
		if e.Test != "" {
			out := append(p.output[key], e.Output)
			if len(out) > 200 { // the end of a long log is what explains it
				out = out[len(out)-200:]
			}
			p.output[key] = out
		}
		return
	case "run":
		return
	case "pass", "skip":
		if e.Test != "" {
			delete(p.output, key)
		}
	case "fail":
		if e.Test != "" {
			p.failedOutput = append(p.failedOutput, failure{key, strings.Join(p.output[key], "")})
			delete(p.output, key)
		}
	default:
		return
	}
	if e.Test != "" && !strings.Contains(e.Test, "/") {
		p.runs[key]++
		if e.Action == "fail" {
			p.failedRuns[key]++
		}
	}
	switch {
	case e.Package == "":
	case e.Test == "":
		p.packages[e.Package] = result{seconds: e.Elapsed, action: e.Action}
	case !strings.Contains(e.Test, "/"):
		r := result{seconds: e.Elapsed, action: e.Action}
		if old, ok := p.tests[key]; ok { // -count: the slowest run, failed if one failed
			r.seconds = max(r.seconds, old.seconds)
			if old.action == "fail" {
				r.action = "fail"
			}
		}
		p.tests[key] = r
	}
}

// short drops the module name: holdco/service/turns → service/turns.
func short(pkg string) string {
	if _, rest, ok := strings.Cut(pkg, "/"); ok {
		return rest
	}
	return pkg
}

func write(w io.Writer, passes []*pass, top int) {
	fmt.Fprintln(w, "Per pass (first to last event; compilation before a package's first event is not included):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| pass | packages run | sum of package times | sum of their CPU times | first to last event | tests | failed |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, p := range passes {
		var sum, cpu float64
		ran := 0
		for _, r := range p.packages {
			sum += r.seconds
			cpu += r.cpu
			if r.seconds > 0 || r.action != "skip" {
				ran++
			}
		}
		failed := 0
		for _, r := range p.tests {
			if r.action == "fail" {
				failed++
			}
		}
		fmt.Fprintf(w, "| %s | %d | %.0f s | %.0f s | %.0f s | %d | %d |\n", p.label, ran, sum, cpu, p.last.Sub(p.first).Seconds(), len(p.tests), failed)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Packages (test binary run time, seconds, and in brackets its CPU time with the processes it waited for; — not run in that pass):")
	fmt.Fprintln(w)
	header(w, "package", passes)
	pkgs := union(passes, func(p *pass) map[string]result { return p.packages })
	sort.SliceStable(pkgs, func(i, j int) bool {
		return maxOf(passes, pkgs[i], packagesOf) > maxOf(passes, pkgs[j], packagesOf)
	})
	for _, k := range pkgs {
		if maxOf(passes, k, packagesOf) < 0.05 {
			continue // no test files, or nothing measurable
		}
		row(w, short(k), passes, k, packagesOf)
	}

	fmt.Fprintln(w)
	fmt.Fprintf(w, "The %d slowest tests (top-level, seconds, subtests included):\n\n", top)
	header(w, "test", passes)
	tests := union(passes, func(p *pass) map[string]result { return p.tests })
	sort.SliceStable(tests, func(i, j int) bool {
		return maxOf(passes, tests[i], testsOf) > maxOf(passes, tests[j], testsOf)
	})
	for i, k := range tests {
		if i == top {
			break
		}
		row(w, k, passes, k, testsOf)
	}

	var failures []string
	for _, p := range passes {
		for _, k := range sortedKeys(p.tests) {
			if p.tests[k].action == "fail" {
				failures = append(failures, fmt.Sprintf("- %s: %s", p.label, k))
			}
		}
		for _, k := range sortedKeys(p.packages) {
			if p.packages[k].action == "fail" {
				failures = append(failures, fmt.Sprintf("- %s: package %s", p.label, short(k)))
			}
		}
	}
	if len(failures) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Failed:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(failures, "\n"))
	}
}

func packagesOf(p *pass) map[string]result { return p.packages }
func testsOf(p *pass) map[string]result    { return p.tests }

func header(w io.Writer, first string, passes []*pass) {
	cols := []string{first}
	for _, p := range passes {
		cols = append(cols, p.label)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
}

func row(w io.Writer, name string, passes []*pass, key string, of func(*pass) map[string]result) {
	cells := []string{"`" + name + "`"}
	for _, p := range passes {
		r, ok := of(p)[key]
		switch {
		case !ok:
			cells = append(cells, "—")
		case r.action == "fail":
			cells = append(cells, fmt.Sprintf("%.1f (failed)", r.seconds))
		case r.cpu > 0:
			cells = append(cells, fmt.Sprintf("%.1f (cpu %.1f)", r.seconds, r.cpu))
		default:
			cells = append(cells, fmt.Sprintf("%.1f", r.seconds))
		}
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

func union(passes []*pass, of func(*pass) map[string]result) []string {
	seen := map[string]bool{}
	var keys []string
	for _, p := range passes {
		for k := range of(p) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func maxOf(passes []*pass, key string, of func(*pass) map[string]result) float64 {
	m := -1.0
	for _, p := range passes {
		if r, ok := of(p)[key]; ok && r.seconds > m {
			m = r.seconds
		}
	}
	return m
}

func sortedKeys(m map[string]result) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
