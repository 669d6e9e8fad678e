package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The authorization matrix lives in testdata/authz_matrix.txt; the format is
// described at the top of that file. This file reads and writes it.

const matrixFile = "testdata/authz_matrix.txt"

// matrixHeader starts the comment line that names the columns; -update-matrix
// regenerates it.
const matrixHeader = "# operation"

func isMatrixHeader(text string) bool {
	f := strings.Fields(text)
	return len(f) > 2 && f[0] == "#" && f[1] == "operation" && f[2] == "path"
}

// maxPathWidth caps the path column's alignment; a longer path pushes only
// its own row's statuses right.
const maxPathWidth = 64

// matrixRow is one line of the table.
type matrixRow struct {
	line  int    // 1-based line in the file; 0 for a row added by -update-matrix
	op    string // operation id, or the HTTP method of an engine-only route
	path  string // path template, {param} or {param=fixture}, optional ?query
	want  []int  // expected status per credential, in credentialNames order
	fresh bool   // the operation changes credentials: see the file's header
	body  string // JSON request body, "" for none

	got     []int    // observed status per credential
	gotBody []string // observed response body per credential
}

// matrixLine is a line of the file: a row, or a comment or blank line kept
// as it is.
type matrixLine struct {
	text string     // comment or blank line
	row  *matrixRow // or a row
}

func readMatrix(path string) ([]matrixLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []matrixLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			lines = append(lines, matrixLine{text: text})
			continue
		}
		r, err := parseMatrixRow(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		r.line = n
		lines = append(lines, matrixLine{row: r})
	}
	return lines, sc.Err()
}

func parseMatrixRow(s string) (*matrixRow, error) {
	next := func() string {
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		tok := s[:i]
		s = s[i:]
		return tok
	}
	r := &matrixRow{op: next(), path: next()}
	if r.path == "" || !strings.HasPrefix(r.path, "/") {
		return nil, fmt.Errorf("want: operation path %d statuses [fresh] [body]", len(credentialNames))
	}
	for _, cred := range credentialNames {
		tok := next()
		code, err := strconv.Atoi(tok)
		if err != nil || code < 100 || code > 599 {
			return nil, fmt.Errorf("status for %s is %q, not an HTTP status", cred, tok)
		}
		r.want = append(r.want, code)
	}
	rest := strings.TrimSpace(s)
	if flag, after, _ := strings.Cut(rest, " "); flag == "fresh" {
		r.fresh, rest = true, strings.TrimSpace(after)
	}
	if rest != "" && !json.Valid([]byte(rest)) {
		return nil, fmt.Errorf("body %s is not JSON", rest)
	}
	r.body = rest
	return r, nil
}

// templatePath is the row's path as the route template: fixtures and the
// query removed.
func (r *matrixRow) templatePath() string {
	p, _, _ := strings.Cut(r.path, "?")
	var b strings.Builder
	for {
		i := strings.Index(p, "{")
		if i < 0 {
			break
		}
		j := strings.Index(p[i:], "}")
		if j < 0 {
			break
		}
		name, _, _ := strings.Cut(p[i+1:i+j], "=")
		b.WriteString(p[:i] + "{" + name + "}")
		p = p[i+j+1:]
	}
	b.WriteString(p)
	return b.String()
}

// concretePath fills every {param} or {param=fixture} of the row's path.
func (r *matrixRow) concretePath(fixture func(param, name string) (string, error)) (string, error) {
	p := r.path
	var b strings.Builder
	for {
		i := strings.Index(p, "{")
		if i < 0 {
			break
		}
		j := strings.Index(p[i:], "}")
		if j < 0 {
			return "", fmt.Errorf("unclosed { in %s", r.path)
		}
		param, name, _ := strings.Cut(p[i+1:i+j], "=")
		v, err := fixture(param, name)
		if err != nil {
			return "", err
		}
		b.WriteString(p[:i] + v)
		p = p[i+j+1:]
	}
	b.WriteString(p)
	return b.String(), nil
}

// statusColumns lines statuses (or the credential names) up under the
// credential names, for failure messages.
func statusColumns[T int | string](cells []T) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = fmt.Sprintf("%-*v", len(credentialNames[i]), c)
	}
	return strings.TrimRight(strings.Join(out, " "), " ")
}

// writeMatrix rewrites the table with each row's observed statuses, aligned.
func writeMatrix(path string, lines []matrixLine) error {
	opW, pathW := len(matrixHeader), len("path")
	for _, l := range lines {
		if l.row != nil {
			opW, pathW = max(opW, len(l.row.op)), max(pathW, min(maxPathWidth, len(l.row.path)))
		}
	}
	colW := func(i int) int { return max(3, len(credentialNames[i])) }
	var b strings.Builder
	pad := func(s string, w int) { b.WriteString(s + strings.Repeat(" ", max(w-len(s), 0)+2)) }
	header := func() {
		pad(matrixHeader, opW)
		pad("path", pathW)
		for i, c := range credentialNames {
			pad(c, colW(i))
		}
		b.WriteString("[fresh] [body]\n")
	}
	wroteHeader := false
	for _, l := range lines {
		switch {
		case l.row == nil && isMatrixHeader(l.text):
			continue
		case l.row == nil:
			b.WriteString(l.text + "\n")
			continue
		}
		if !wroteHeader {
			header()
			wroteHeader = true
		}
		r := l.row
		pad(r.op, opW)
		pad(r.path, pathW)
		codes := r.got
		if (codes == nil || slices.Contains(codes, 0)) && r.want != nil {
			codes = r.want // not run, or a cell could not run
		}
		for i, c := range codes {
			pad(strconv.Itoa(c), colW(i))
		}
		var tail []string
		if r.fresh {
			tail = append(tail, "fresh")
		}
		if r.body != "" {
			tail = append(tail, r.body)
		}
		b.WriteString(strings.TrimRight(strings.Join(tail, " "), " "))
		// The padding after the last status is not wanted without a tail.
		out := strings.TrimRight(b.String(), " ")
		b.Reset()
		b.WriteString(out + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
