package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"holdco/config"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// freePort is testenv.FreePort: outside the ephemeral range, where an
// outgoing connection could take the port before the program binds it.
func freePort(t testing.TB) int { return testenv.FreePort(t) }

// TestStandaloneTemporal runs `holdco temporal` on free ports: it serves
// the namespace with holdco's search attributes to any client, and stops
// on cancellation.
func TestStandaloneTemporal(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOLDCO_DATA_DIR": t.TempDir(), "HOLDCO_TEMPORAL_UI_PORT": "0", "HOLDCO_LOG_LEVEL": "error"}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut testenv.LogBuffer
	done := make(chan error, 1)
	var addr string
	// A free port can be taken by another process before the server binds
	// it: that start fails saying so, and the test picks another.
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		addr = "127.0.0.1:" + strconv.Itoa(port)
		go func() {
			done <- standaloneTemporal(ctx, []string{"--port", strconv.Itoa(port)}, getenv, &out, &errOut)
		}()
		var startErr error
		require.Eventually(t, func() bool {
			select {
			case startErr = <-done:
				return true
			default:
			}
			return strings.Contains(out.String(), "TEMPORAL_ADDRESS="+addr)
		}, testenv.EventualBound, 50*time.Millisecond)
		if startErr == nil {
			break
		}
		require.True(t, attempt < 3 && strings.Contains(startErr.Error(), "is in use"), "%v\n%s", startErr, errOut.String())
	}

	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	require.NoError(t, err)
	attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	for name := range contract.SearchAttributes() {
		assert.Contains(t, attrs.GetCustomAttributes(), name)
	}
	c.Close()
	cancel()
	require.NoError(t, <-done)

	env["TEMPORAL_ADDRESS"] = "temporal.example:7233"
	err = standaloneTemporal(context.Background(), nil, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "TEMPORAL_ADDRESS")
}

// TestHealthcheck: 200 passes, anything else fails naming the URL; each
// role is asked on its own listener (sites its readiness on the sites
// listener, the worker on its probe listener).
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" && r.URL.Path != "/ready" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"x"}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	env := map[string]string{"HOLDCO_API_ADDR": ":" + port, "HOLDCO_WORKER_HEALTH_ADDR": "0.0.0.0:" + port}
	getenv := func(k string) string { return env[k] }
	var errOut bytes.Buffer
	ctx := context.Background()

	require.NoError(t, healthcheck(ctx, nil, getenv, &errOut), "api by default")
	require.NoError(t, healthcheck(ctx, []string{"--role", "worker"}, getenv, &errOut))
	require.NoError(t, healthcheck(ctx, []string{"--url", srv.URL + "/health"}, getenv, &errOut))
	status = http.StatusServiceUnavailable
	err := healthcheck(ctx, nil, getenv, &errOut)
	assert.ErrorContains(t, err, "answered 503")
	assert.ErrorContains(t, err, "http://127.0.0.1:"+port+"/health")
	err = healthcheck(ctx, []string{"--role", "web"}, getenv, &errOut)
	assert.ErrorContains(t, err, `unknown role "web"`)

	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	for role, want := range map[string]string{"api": "http://127.0.0.1:8080/health", "mcp": "http://127.0.0.1:8081/health", "oauth": "http://127.0.0.1:8082/health",
		"sites": "http://127.0.0.1:8083/_ready", "worker": "http://127.0.0.1:8084/ready"} {
		got, err := healthURL(cfg, role)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}
