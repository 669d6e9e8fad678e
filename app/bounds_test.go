package app_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/testenv"
)

// TestListenersDropSlowAndIdleClients: on every listener, a client that
// stops sending its body, or keeps a connection open after its answer, is
// disconnected by the server (HOLDCO_HTTP_READ_TIMEOUT and
// HOLDCO_HTTP_IDLE_TIMEOUT, set short here) instead of holding the
// connection and its goroutine for ever. The only wait is for the server
// to close: no duration is asserted.
func TestListenersDropSlowAndIdleClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := embeddedConfig(t, dir, map[string]string{
		"HOLDCO_HTTP_READ_TIMEOUT": "300ms", "HOLDCO_HTTP_IDLE_TIMEOUT": "300ms", "HOLDCO_HTTP_WRITE_TIMEOUT": "1m",
	})
	a := startRoles(t, cfg, app.RoleAPI, app.RoleMCP, app.RoleOAuth, app.RoleSites)
	for role, addr := range map[string]string{"api": a.APIAddr(), "mcp": a.MCPAddr(), "oauth": a.OAuthAddr(), "sites": a.SitesAddr()} {
		t.Run(role+"/stalled body", func(t *testing.T) {
			conn := dial(t, addr)
			_, err := io.WriteString(conn, "POST /health HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":")
			require.NoError(t, err)
			waitClosed(t, conn)
		})
		t.Run(role+"/idle connection", func(t *testing.T) {
			conn := dial(t, addr)
			_, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
			require.NoError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, "", resp.Header.Get("Connection"), "the server keeps the connection alive at first")
			waitClosed(t, conn)
		})
	}
	// The API listener's front (analytics capture) keeps the same bounds.
	before := a.APIFrontStats().Served
	t.Run("api front/stalled body", func(t *testing.T) {
		conn := dial(t, a.APIAddr())
		_, err := io.WriteString(conn, "POST /analytics/e/ HTTP/1.1\r\nHost: "+a.APIAddr()+"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":")
		require.NoError(t, err)
		waitClosed(t, conn)
	})
	t.Run("api front/idle connection", func(t *testing.T) {
		conn := dial(t, a.APIAddr())
		_, err := io.WriteString(conn, "GET /analytics/v1.js?c=nokey0000 HTTP/1.1\r\nHost: "+a.APIAddr()+"\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "", resp.Header.Get("Connection"), "the server keeps the connection alive at first")
		waitClosed(t, conn)
	})
	require.Equal(t, before+2, a.APIFrontStats().Served, "the front answered both")
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// waitClosed reads until the server closes the connection; the deadline
// is the bound only a server that never closes reaches.
func waitClosed(t *testing.T, conn net.Conn) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(testenv.EventualBound)))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the server kept the connection open")
	}
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading until close: %v", err)
	}
}
