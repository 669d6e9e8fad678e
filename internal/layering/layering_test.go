package layering_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A rule forbids the packages matching from to link (directly or through
// other packages) any package matching forbid, except those matching
// allow. Patterns are import paths; "p/..." matches p and everything under
// it. Rules about packages that do not exist yet (mcp, oauth) apply as soon
// as they appear.
type rule struct {
	name   string
	from   []string
	forbid []string
	allow  []string
	// except are packages matching from that the rule leaves out.
	except []string
	// direct: only the packages' own imports count, not what those link.
	direct bool
	// optional: the rule may match no package today.
	optional bool
}

// The worker side of Temporal: linking either means a package carries
// workflow code or runs a worker.
var workerSDK = []string{"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/worker"}

var rules = []rule{
	{
		name:   "the REST adapter starts workflows only through the contract and never links providers",
		from:   []string{"holdco/api/..."},
		forbid: append([]string{"holdco/activities/...", "holdco/workflows/...", "holdco/providers/..."}, workerSDK...),
		allow:  []string{"holdco/workflows/contract"},
	},
	{
		name:     "the connector, the authorization server and the console are adapters like the REST API",
		from:     []string{"holdco/mcp/...", "holdco/oauth/...", "holdco/console/..."},
		forbid:   append([]string{"holdco/activities/...", "holdco/workflows/...", "holdco/providers/..."}, workerSDK...),
		allow:    []string{"holdco/workflows/contract"},
		optional: true,
	},
	{
		name:   "use cases reach workflows through the contract and providers through interfaces",
		from:   []string{"holdco/service/..."},
		forbid: append([]string{"holdco/activities/...", "holdco/workflows/...", "holdco/providers/..."}, workerSDK...),
		allow:  []string{"holdco/workflows/contract"},
	},
	{
		name:   "the store links no holdco package but models",
		from:   []string{"holdco/store/..."},
		forbid: []string{"holdco/..."},
		allow:  []string{"holdco/store/...", "holdco/models/..."},
	},
	{
		name:   "models is a leaf",
		from:   []string{"holdco/models/..."},
		forbid: []string{"holdco/..."},
		allow:  []string{"holdco/models/..."},
	},
	{
		name:   "the workflow contract links nothing of the worker",
		from:   []string{"holdco/workflows/contract"},
		forbid: append([]string{"holdco/..."}, workerSDK...),
		allow:  []string{"holdco/workflows/contract", "holdco/models/..."},
	},
	{
		name: "workflow code imports only the contract, models, the activities' typed references and the SDK",
		from: []string{"holdco/workflows/..."},
		// What the activities link is theirs: a workflow names them, it
		// does not call the use cases behind them.
		direct: true,
		forbid: []string{"holdco/..."},
		allow:  []string{"holdco/workflows/...", "holdco/models/...", "holdco/activities"},
	},
	{
		name:   "activities adapt use cases: no workflow code, no other adapter, no configuration",
		from:   []string{"holdco/activities/..."},
		forbid: append([]string{"holdco/workflows/...", "holdco/api/...", "holdco/mcp/...", "holdco/oauth/...", "holdco/app/...", "holdco/config/..."}, workerSDK...),
		allow:  []string{"holdco/workflows/contract"},
	},
	{
		name:   "configuration is read by the process composer and the command alone; use cases get typed values",
		from:   []string{"holdco/..."},
		except: []string{"holdco/app/...", "holdco/cmd/...", "holdco/config/..."},
		forbid: []string{"holdco/config/..."},
	},
	{
		// holdco uses the pure-Go SQLite (modernc.org/sqlite). The cgo
		// driver made every build compile SQLite's C amalgamation with gcc,
		// twice in make test (with and without -race); it came in through
		// gorm.io/driver/sqlite, whose dialector is store/internal/gormsqlite
		// without that import.
		name:   "no package links the cgo SQLite driver",
		from:   []string{"holdco/..."},
		forbid: []string{"github.com/mattn/go-sqlite3", "gorm.io/driver/sqlite"},
	},
	{
		name:   "providers link no holdco package but models",
		from:   []string{"holdco/providers/..."},
		forbid: []string{"holdco/..."},
		allow:  []string{"holdco/providers/...", "holdco/models/..."},
	},
}

// testSupport are harness packages that only tests import (a migrated
// store, a Temporal test server with the worker, stripe-mock): they may link
// anything, and the last rule keeps them out of every other package.
var testSupport = []string{"holdco/testenv/...", "holdco/service/servicetest"}

func init() {
	rules = append(rules, rule{
		name:   "test harnesses are linked by tests only",
		from:   []string{"holdco/..."},
		forbid: testSupport,
	})
}

func matches(pkg string, patterns []string) bool {
	pkg, _, _ = strings.Cut(pkg, " ") // a test variant: "holdco/store [holdco/store.test]"
	return slices.ContainsFunc(patterns, func(p string) bool {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			return pkg == base || strings.HasPrefix(pkg, base+"/")
		}
		return pkg == p
	})
}

// importGraph is every holdco package and everything it links (standard
// library included), from `go list -deps`, as import edges. The tests
// share one listing (several seconds of CPU each); a test may not change
// the map.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	graph, err := listImportGraph()
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

var listImportGraph = sync.OnceValues(func() (map[string][]string, error) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "holdco/...").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return nil, fmt.Errorf("go list -deps: %v\n%s", err, stderr)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		graph[fields[0]] = fields[1:]
	}
	return graph, nil
})

// forbiddenLinks walks what from links, breadth first, and returns for
// each forbidden package reached the shortest import chain to it.
func forbiddenLinks(graph map[string][]string, from string, r rule) [][]string {
	parent := map[string]string{from: ""}
	queue := []string{from}
	var chains [][]string
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if pkg != from && matches(pkg, r.forbid) && !matches(pkg, r.allow) {
			var chain []string
			for p := pkg; p != ""; p = parent[p] {
				chain = append([]string{p}, chain...)
			}
			chains = append(chains, chain)
		}
		if r.direct && pkg != from {
			continue
		}
		for _, dep := range graph[pkg] {
			if _, seen := parent[dep]; !seen {
				parent[dep] = pkg
				queue = append(queue, dep)
			}
		}
	}
	return chains
}

func TestLayering(t *testing.T) {
	graph := importGraph(t)
	var own []string
	for pkg := range graph {
		if matches(pkg, []string{"holdco/..."}) {
			own = append(own, pkg)
		}
	}
	slices.Sort(own)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			matched := 0
			for _, pkg := range own {
				if !matches(pkg, r.from) || matches(pkg, r.except) || matches(pkg, testSupport) {
					continue
				}
				matched++
				for _, chain := range forbiddenLinks(graph, pkg, r) {
					t.Errorf("%s links %s: %s", pkg, chain[len(chain)-1], strings.Join(chain, " → "))
				}
			}
			if matched == 0 && !r.optional {
				t.Errorf("no package matches %v: the rule checks nothing", r.from)
			}
		})
	}
}

// TestLayeringCatchesAForbiddenLink shows the walk finds a link that is
// there: the process composer does run a worker.
func TestLayeringCatchesAForbiddenLink(t *testing.T) {
	chains := forbiddenLinks(importGraph(t), "holdco/app", rule{forbid: workerSDK})
	if len(chains) == 0 {
		t.Fatal("holdco/app links the worker SDK, but the walk found no chain")
	}
}

// TestDirectRuleSeesOnlyOwnImports: a direct rule finds what a package
// imports itself and not what its imports link (workflows import the
// activities, which link the use cases).
func TestDirectRuleSeesOnlyOwnImports(t *testing.T) {
	graph := importGraph(t)
	if chains := forbiddenLinks(graph, "holdco/workflows", rule{direct: true, forbid: []string{"holdco/activities"}}); len(chains) != 1 {
		t.Errorf("holdco/workflows imports holdco/activities, but the direct walk found %v", chains)
	}
	if chains := forbiddenLinks(graph, "holdco/workflows", rule{direct: true, forbid: []string{"holdco/store"}}); len(chains) != 0 {
		t.Errorf("holdco/workflows links the store only through the activities, but the direct walk found %v", chains)
	}
	if chains := forbiddenLinks(graph, "holdco/workflows", rule{forbid: []string{"holdco/store"}}); len(chains) == 0 {
		t.Error("holdco/workflows links the store through the activities, but the full walk found no chain")
	}
}

// serverLinkers are the packages that may link Temporal's server (about a
// thousand packages): the holdco command, whose embedded default runs it
// in process, and the tests' server (the Makefile's SERVER_PKGS).
// Everything else, testenv included, stays without it: a test binary that
// links the server links a thousand packages more, and go test's vet of it
// needs their analysis facts. The command links the server only when
// built without -race (cmd/holdco/embedded.go), so its -race test binary
// does not.
func serverLinkers(t *testing.T) []string {
	return append([]string{"holdco/cmd/holdco"}, makeList(t, "SERVER_PKGS")...)
}

// TestOnlyTheServersTestBinariesLinkTemporalsServer: make test's test
// binaries, test files included, link none of Temporal's server, but
// those of the packages that are the server (the Makefile's SERVER_PKGS,
// tested in a go test of their own without vet: vet of a package that
// links the server needs the analysis facts of its thousand packages). A
// store test that imported the server's SQLite plugin made every run vet
// and link them.
func TestOnlyTheServersTestBinariesLinkTemporalsServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-race", "-deps", "-test", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "holdco/...").Output()
	if err != nil {
		t.Fatalf("go list -race -deps -test: %v", err)
	}
	graph := map[string][]string{}
	var binaries []string
	serverPkgs := makeList(t, "SERVER_PKGS")
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		id, deps := fields[0], fields[1:]
		if len(deps) > 0 && strings.HasPrefix(deps[0], "[") { // "pkg [x.test]": the test variant
			id, deps = id+" "+deps[0], deps[1:]
		}
		graph[id] = joinVariants(deps)
		if name, ok := strings.CutSuffix(id, ".test"); ok && !matches(name, serverPkgs) {
			binaries = append(binaries, id)
		}
	}
	if len(binaries) < 10 {
		t.Fatalf("only %d test binaries listed: the walk checks nothing", len(binaries))
	}
	serverOnly := makeList(t, "SERVER_ONLY")
	if !slices.Contains(serverOnly, "go.temporal.io/server/...") {
		t.Fatalf("the Makefile's SERVER_ONLY %v does not name Temporal's server", serverOnly)
	}
	for _, p := range serverOnly {
		server := rule{forbid: []string{p}}
		for _, bin := range binaries {
			if chains := forbiddenLinks(graph, bin, server); len(chains) > 0 {
				if p == "go.temporal.io/server/..." {
					t.Errorf("the test binary %s links Temporal's server: %s (move the test to devserver's)", bin, strings.Join(chains[0], " → "))
				} else {
					t.Errorf("the test binary %s links %s, which the Makefile's SERVER_ONLY compiles without the race detector for the tests' Temporal server alone: %s (take it out of SERVER_ONLY)",
						bin, p, strings.Join(chains[0], " → "))
				}
				break
			}
		}
	}
}

// makeList is the Makefile's variable name (`name := a b \` and its
// continuation lines), split on spaces.
func makeList(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	in := false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if !in {
			rest, ok := strings.CutPrefix(line, name+" :=")
			if !ok {
				continue
			}
			in, line = true, rest
		}
		more := strings.HasSuffix(line, "\\")
		words = append(words, strings.Fields(strings.TrimSuffix(line, "\\"))...)
		if !more {
			break
		}
	}
	if len(words) == 0 {
		t.Fatalf("the Makefile has no %s", name)
	}
	return words
}

// joinVariants puts a test variant's bracket back on its import path:
// go list prints "holdco/store [holdco/store.test]" as two fields.
func joinVariants(fields []string) []string {
	var out []string
	for _, f := range fields {
		if strings.HasPrefix(f, "[") && len(out) > 0 {
			out[len(out)-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

func TestOnlyTheCommandLinksTemporalsServer(t *testing.T) {
	graph := importGraph(t)
	r := rule{forbid: []string{"go.temporal.io/server/..."}}
	serverLinkers := serverLinkers(t)
	linked := 0
	for pkg := range graph {
		if !matches(pkg, []string{"holdco/..."}) {
			continue
		}
		chains := forbiddenLinks(graph, pkg, r)
		if matches(pkg, serverLinkers) {
			if len(chains) > 0 {
				linked++
			}
			continue
		}
		if len(chains) > 0 {
			chain := chains[0]
			t.Errorf("%s links Temporal's server: %s (only %v may; see the Makefile's SERVER_PKGS)", pkg, strings.Join(chain, " → "), serverLinkers)
		}
	}
	if linked == 0 {
		t.Error("no package links Temporal's server: the walk checks nothing")
	}
}
