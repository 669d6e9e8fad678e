package devserver

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// takenPorts makes pickPort hand out the port of a listener the test
// holds to the calls (numbered from 1) that take says, and free ports to
// the others; the function it returns tells how many ports were picked.
func takenPorts(t *testing.T, take func(call int) bool) (taken int, picked func() int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	taken = l.Addr().(*net.TCPAddr).Port
	var mu sync.Mutex
	calls := 0
	pickPort = func(host string) (int, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if take(n) {
			return taken, nil
		}
		return freePort(host)
	}
	t.Cleanup(func() { pickPort = freePort })
	return taken, func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}

// buildOnPickedPorts builds a server as Start does for a zero
// FrontendPort, without starting it: a started server under -race
// reports its own false races (docs/testing.md), the build binds every
// listener. The server is stopped when the test ends.
func buildOnPickedPorts(t *testing.T) (Options, error) {
	o := Options{Host: "127.0.0.1", Logger: slog.New(slog.DiscardHandler)}
	var err error
	if o.FrontendPort, err = pickPort(o.Host); err != nil {
		return o, err
	}
	level := &slog.LevelVar{}
	level.Set(slog.LevelError)
	server, err := o.build(slogLogger{log: o.Logger, level: level, building: &atomic.Bool{}}, true)
	if err == nil {
		t.Cleanup(func() { _ = server.Stop() })
	}
	return o, err
}

// A port picked for the server but bound by another process before the
// server binds it (tests start servers side by side) costs a second
// attempt, not the start. Each attempt picks the HTTP port, then the
// history, matching and worker services' gRPC ports; a second attempt
// picks the frontend's again.
func TestBuildPicksAgainWhenAPickedPortIsTaken(t *testing.T) {
	for _, c := range []struct {
		name string
		call int
	}{
		{"frontend HTTP port", 2}, // the HTTP API's listener returns the error
		{"history gRPC port", 3},  // a service's gRPC listener logs a Fatal
		{"worker gRPC port", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			taken, picked := takenPorts(t, func(call int) bool { return call == c.call })
			o, err := buildOnPickedPorts(t)
			require.NoError(t, err)
			assert.Equal(t, 1+4+1+4, picked(), "one attempt failed, one succeeded")
			assert.NotEqual(t, taken, o.FrontendPort)
			// The built server listens on its frontend port.
			_, err = net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.FrontendPort)))
			assert.ErrorContains(t, err, "address already in use")
		})
	}
}

// Ports that stay taken end the build after startAttempts, with the
// listener's error, not a panic.
func TestBuildGivesUpWhenPickedPortsStayTaken(t *testing.T) {
	_, picked := takenPorts(t, func(call int) bool { return call > 1 })
	_, err := buildOnPickedPorts(t)
	require.Error(t, err)
	assert.ErrorContains(t, err, "address already in use")
	assert.Equal(t, 1+startAttempts*4+(startAttempts-1), picked())
}

// A frontend port the caller chose that is taken is the caller's error
// at once.
func TestStartRefusesATakenFrontendPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = Start(context.Background(), Options{FrontendPort: l.Addr().(*net.TCPAddr).Port, Logger: slog.New(slog.DiscardHandler)})
	var inUse *PortInUseError
	require.ErrorAs(t, err, &inUse)
	assert.Equal(t, "Temporal frontend", inUse.Name)
}
