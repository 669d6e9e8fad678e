package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
)

// EmbeddedTemporal is a running embedded Temporal server: the embedded
// default's (no TEMPORAL_ADDRESS) and `holdco temporal`'s.
type EmbeddedTemporal interface {
	// Address is the frontend's host:port for SDK clients.
	Address() string
	// UIAddress is the Web UI's host:port, empty when it is off.
	UIAddress() string
	// UIErrors delivers the UI's error if it stops after the start (nil
	// without a UI).
	UIErrors() <-chan error
	// Stop shuts the server down; persisted state stays on disk.
	Stop()
}

// EmbeddedTemporalOptions are what the app asks of an embedded server.
type EmbeddedTemporalOptions struct {
	// DatabaseFile holds the server's state; it survives restarts.
	DatabaseFile string
	// Host is the IP every listener binds to.
	Host string
	// FrontendPort is the port clients dial (0: a free one).
	FrontendPort int
	// UIPort serves the Web UI (0: no UI).
	UIPort int
	// Namespace is created at start when missing, with SearchAttributes.
	Namespace        string
	SearchAttributes map[string]enumspb.IndexedValueType
	Logger           *slog.Logger
	// LogLevel filters the server's own logs.
	LogLevel slog.Level
}

// PortInUseError is an embedded server's configured port that another
// program holds.
type PortInUseError struct {
	Port int
	Err  error
}

func (e *PortInUseError) Error() string { return fmt.Sprintf("port %d is in use: %v", e.Port, e.Err) }

func (e *PortInUseError) Unwrap() error { return e.Err }

// EmbeddedTemporalStarter starts an embedded server and returns once its
// frontend accepts connections; a port that is taken is a
// *PortInUseError.
type EmbeddedTemporalStarter func(context.Context, EmbeddedTemporalOptions) (EmbeddedTemporal, error)

var embedded struct {
	sync.RWMutex
	start EmbeddedTemporalStarter
}

// UseEmbeddedTemporal sets how the app starts its embedded Temporal
// server. `holdco` sets Temporal's server in its own process (package
// devserver); this package does not import it, so that what links the app
// without being the holdco command (its tests among them, under the race
// detector) does not compile Temporal's server, about a thousand packages.
func UseEmbeddedTemporal(start EmbeddedTemporalStarter) {
	embedded.Lock()
	defer embedded.Unlock()
	embedded.start = start
}

// errNoEmbeddedTemporal is the start without TEMPORAL_ADDRESS in a program
// that has no embedded server.
var errNoEmbeddedTemporal = errors.New("TEMPORAL_ADDRESS: this program has no embedded Temporal server; " +
	"set TEMPORAL_ADDRESS to a Temporal cluster (the holdco command has one)")

// embeddedStarter is what UseEmbeddedTemporal set (nil: none).
func embeddedStarter() EmbeddedTemporalStarter {
	embedded.RLock()
	defer embedded.RUnlock()
	return embedded.start
}

func startEmbedded(ctx context.Context, start EmbeddedTemporalStarter, o EmbeddedTemporalOptions) (EmbeddedTemporal, error) {
	if start == nil {
		return nil, errNoEmbeddedTemporal
	}
	return start(ctx, o)
}
