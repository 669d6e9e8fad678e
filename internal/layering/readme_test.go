package layering_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayoutNamesEveryPackage keeps the README's layout table true
// to the tree: every top-level folder holding Go packages has a row, and
// every package under service/ and providers/ is named in its folder's
// row (as `service/x` or `x`).
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	out := goList(t, "holdco/...")
	section := docSection(t, "README.md", "## Layout")
	rows := map[string]string{} // first cell's folder -> the row
	rowRE := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)$")
	for _, m := range rowRE.FindAllStringSubmatch(section, -1) {
		rows[strings.TrimSuffix(m[1], "/")] = m[2]
	}
	for _, path := range out {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, "holdco"), "/")
		if rel == "" || strings.Contains(rel, "/testdata") {
			continue
		}
		parts := strings.Split(rel, "/")
		top := parts[0]
		row, ok := rows[top]
		if !ok && len(parts) > 1 {
			row, ok = rows[parts[0]+"/"+parts[1]]
		}
		if !ok {
			t.Errorf("README.md's layout table has no row for %s/ (package %s)", top, path)
			continue
		}
		if (top == "service" || top == "providers") && len(parts) > 1 {
			sub := parts[1]
			if !strings.Contains(row, "`"+top+"/"+sub) && !strings.Contains(row, "`"+sub) {
				t.Errorf("README.md's layout row for %s/ does not name %s/%s", top, top, sub)
			}
		}
	}
}

// TestArchitectureNamesEveryServicePackage keeps the package list of
// docs/architecture.md true to the tree: every package under service/ has
// its line (`service/x/` at the start of a line of the Packages block),
// and every line names a package that exists.
func TestArchitectureNamesEveryServicePackage(t *testing.T) {
	block := docSection(t, "docs/architecture.md", "## Packages")
	open := strings.Index(block, "```\n")
	if open < 0 {
		t.Fatal("the Packages section has no code block")
	}
	block = block[open+4:]
	block = block[:strings.Index(block, "```")]
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^service/([a-z]+)/`).FindAllStringSubmatch(block, -1) {
		listed[m[1]] = true
	}
	exists := map[string]bool{}
	for _, path := range goList(t, "holdco/service/...") {
		sub, ok := strings.CutPrefix(path, "holdco/service/")
		if !ok {
			continue
		}
		exists[sub] = true
		if !listed[sub] {
			t.Errorf("docs/architecture.md's package list has no line for service/%s/", sub)
		}
	}
	for sub := range listed {
		if !exists[sub] {
			t.Errorf("docs/architecture.md lists service/%s/, which is not a package", sub)
		}
	}
}

// goList is the import paths of the packages matching pattern.
func goList(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// docSection is the text of a document of the repository from heading
// (a line of its own) to the next heading of level 2 or the end.
func docSection(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, heading)
	if start < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	section := doc[start:]
	if end := strings.Index(section[len(heading):], "\n## "); end >= 0 {
		section = section[:len(heading)+end]
	}
	return section
}
