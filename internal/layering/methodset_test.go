package layering_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"holdco/testenv"
)

// maxMethods bounds the method set of a storage or use-case type: a type
// past it is the whole store again (every use case reaching every table),
// usually because it embeds a wider type and so promotes all its methods.
const maxMethods = 60

// methodSetExempt are types left out of the bound, with why.
var methodSetExempt = map[string]string{
	// The tests' bundle of every use case, embedded so a test reads
	// svc.CreateCompany; no production code sees it.
	"holdco/service/servicetest.Services": "test fixture",
}

// TestMethodSetsStaySmall type-checks store/ and service/ (from source,
// against the build cache's export data of their imports, built with this
// test binary's flags so that the suite's own build is found there) and
// fails on a named type whose method set (of *T: value and pointer
// methods, exported or not, promoted ones included) has more than
// maxMethods methods.
func TestMethodSetsStaySmall(t *testing.T) {
	args := append([]string{"list", "-export", "-deps"}, testenv.CompileFlags()...)
	args = append(args, "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}",
		"holdco/store/...", "holdco/service/...")
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -export: %v\n%s", err, stderr)
	}
	type pkg struct {
		path, dir string
		files     []string
	}
	exports := map[string]string{}
	var ours []pkg
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 4 {
			t.Fatalf("go list -export: unexpected line %q", line)
		}
		exports[f[0]] = f[1]
		if matches(f[0], []string{"holdco/store/...", "holdco/service/..."}) {
			ours = append(ours, pkg{path: f[0], dir: f[2], files: strings.Split(f[3], ",")})
		}
	}
	if !slices.ContainsFunc(ours, func(p pkg) bool { return p.path == "holdco/store" }) {
		t.Fatal("go list named no holdco/store")
	}

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(file)
	})
	counted := 0
	for _, p := range ours {
		var files []*ast.File
		for _, name := range p.files {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: imp}
		tp, err := conf.Check(p.path, fset, files, nil)
		if err != nil {
			t.Fatalf("type-check %s: %v", p.path, err)
		}
		for _, name := range tp.Scope().Names() {
			tn, ok := tp.Scope().Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			counted++
			typ := tn.Type()
			if _, ok := typ.Underlying().(*types.Interface); !ok {
				typ = types.NewPointer(typ)
			}
			n := types.NewMethodSet(typ).Len()
			full := p.path + "." + name
			if _, ok := methodSetExempt[full]; ok {
				continue
			}
			if n > maxMethods {
				t.Errorf("%s has %d methods (at most %d): split it by domain, or hold what it needs in a field instead of embedding a wider type", full, n, maxMethods)
			}
		}
	}
	if counted == 0 {
		t.Fatal("no named types found in store/ and service/")
	}
}
