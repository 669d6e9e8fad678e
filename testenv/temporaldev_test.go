package testenv

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTemporalDevStopsWithItsParent: the tests' Temporal server serves on
// the address it prints and exits when its standard input closes, so a
// test binary that ends (or is killed) leaves no server behind.
func TestTemporalDevStopsWithItsParent(t *testing.T) {
	bin, err := temporalDevBinary()
	require.NoError(t, err)
	cmd := temporalDevCommand(bin, "-stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	require.True(t, ok, "first line %q", line)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the frontend accepts connections on the address it printed")
	require.NoError(t, conn.Close())

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	require.NoError(t, stdin.Close())
	select {
	case err := <-exited:
		assert.NoError(t, err, "a clean exit")
	case <-time.After(EventualBound):
		t.Fatalf("still running %s after its standard input closed", EventualBound)
	}
}

// TestTemporalDevRefusesBadFlags: a mistake on its command line is an
// error that names the flag, not a server on some default.
func TestTemporalDevRefusesBadFlags(t *testing.T) {
	bin, err := temporalDevBinary()
	require.NoError(t, err)
	for _, args := range [][]string{{"-port", "70000"}, {"-ui-port", "-1"}, {"-log-level", "loud"}, {"-db", "x.db"}, {"extra"}} {
		out, err := temporalDevCommand(bin, args...).CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%v: %s", args, out)
		assert.Equal(t, 1, exit.ExitCode())
		assert.Contains(t, string(out), "temporaldev:", args)
	}
}
