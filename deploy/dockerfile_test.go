package deploy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type instruction struct {
	cmd   string   // lower-case: from, run, user, …
	args  []string // the arguments as parsed
	flags []string
	line  int
}

// parseDockerfile parses ../Dockerfile with BuildKit's parser into stages
// of instructions.
func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	res, err := parser.Parse(f)
	require.NoError(t, err)
	var stages [][]instruction
	for _, n := range res.AST.Children {
		in := instruction{cmd: strings.ToLower(n.Value), flags: n.Flags, line: n.StartLine}
		for a := n.Next; a != nil; a = a.Next {
			in.args = append(in.args, a.Value)
		}
		if in.cmd == "from" {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	return stages
}

// TestDockerfile: a multi-stage build of a static binary into a small
// final image that runs as a non-root user, with holdco as entrypoint and
// a health check, and nothing fetched from a URL by ADD.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "../Dockerfile")
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage")
	build, final := stages[0], stages[len(stages)-1]

	static := false
	for _, in := range build {
		if in.cmd == "env" || in.cmd == "arg" || in.cmd == "run" {
			static = static || strings.Contains(strings.Join(in.args, " "), "CGO_ENABLED=0")
		}
		if in.cmd == "env" && slicesContainsPair(in.args, "CGO_ENABLED", "0") {
			static = true
		}
	}
	assert.True(t, static, "the build stage sets CGO_ENABLED=0")

	assert.Equal(t, []string{"scratch"}, final[0].args, "the final image is empty but for the binary")
	var user, entrypoint, healthcheck []string
	for _, in := range final {
		switch in.cmd {
		case "user":
			user = in.args
		case "entrypoint":
			entrypoint = in.args
		case "healthcheck":
			healthcheck = in.args
		case "run":
			t.Errorf("line %d: the final stage runs nothing (an empty base has no shell)", in.line)
		}
	}
	require.NotEmpty(t, user, "USER in the final stage")
	name := strings.Split(user[0], ":")[0]
	assert.NotContains(t, []string{"0", "root", ""}, name, "non-root user")
	assert.Equal(t, []string{"/holdco"}, entrypoint)
	require.NotEmpty(t, healthcheck)
	assert.Contains(t, strings.Join(healthcheck, " "), "healthcheck", "HEALTHCHECK runs holdco healthcheck")

	for i, st := range stages {
		for _, in := range st {
			if in.cmd == "add" {
				for _, a := range in.args {
					assert.False(t, strings.Contains(a, "://"), "stage %d line %d: ADD from a URL", i, in.line)
				}
			}
		}
	}
}

// TestDockerfileCheckCatchesMistakes: the checks above fail on a
// single-stage image running as root that ADDs from a URL.
func TestDockerfileCheckCatchesMistakes(t *testing.T) {
	bad := t.TempDir() + "/Dockerfile"
	require.NoError(t, os.WriteFile(bad, []byte("FROM golang:1.26\nADD https://example.com/x.tgz /x\nUSER root\nENTRYPOINT [\"/holdco\"]\n"), 0o600))
	stages := parseDockerfile(t, bad)
	assert.Len(t, stages, 1)
	assert.Equal(t, "add", stages[0][1].cmd)
	assert.Contains(t, stages[0][1].args[0], "://")
	assert.Equal(t, []string{"root"}, stages[0][2].args)
}

func slicesContainsPair(args []string, k, v string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == k && args[i+1] == v {
			return true
		}
	}
	return false
}
