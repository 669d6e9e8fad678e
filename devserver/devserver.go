// Package devserver runs a single-process Temporal server persisted to a
// SQLite file, with the Temporal Web UI, inside holdco's own process. It is
// the embedded default used when no TEMPORAL_ADDRESS is configured; a real
// deployment points at a Temporal cluster instead.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const clusterName = "active"

// Options configure the embedded server. Zero ports for the internal
// services are picked from free loopback ports at start.
type Options struct {
	// DatabaseFile is the SQLite file holding all Temporal state; it survives
	// restarts. Empty keeps everything in memory (tests).
	DatabaseFile string
	// Host is the IP every listener binds to (default 127.0.0.1).
	Host string
	// FrontendPort is the gRPC port clients and workers dial (e.g. 7233);
	// 0 picks a free one (Address tells which).
	FrontendPort int
	// UIPort serves the Temporal Web UI; 0 disables the UI.
	UIPort int
	// Namespace is created at start when missing (required with a
	// DatabaseFile). In memory the server starts without one: register
	// namespaces through its API.
	Namespace string
	// SearchAttributes are registered on the namespace when it is created.
	SearchAttributes map[string]enumspb.IndexedValueType
	Logger           *slog.Logger
	// LogLevel filters the server's own (chatty) logs.
	LogLevel slog.Level
	// NamespaceCacheRefresh is how soon a namespace registered while the
	// server runs, and its search attributes, reach every service (zero:
	// Temporal's default, 2 s). Test servers that register a namespace
	// per test set it lower.
	NamespaceCacheRefresh time.Duration
}

// Server is a running embedded Temporal server.
type Server struct {
	server   temporal.Server
	ui       *uiserver.Server
	uiErr    chan error
	address  string
	uiAddr   string
	logLevel *slog.LevelVar
}

// Address is the frontend host:port for SDK clients.
func (s *Server) Address() string { return s.address }

// UIAddress is the Web UI host:port, empty when the UI is disabled.
func (s *Server) UIAddress() string { return s.uiAddr }

// PortInUseError reports which configured port could not be bound.
type PortInUseError struct {
	Name string
	Port int
	Err  error
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("%s port %d is in use: %v", e.Name, e.Port, e.Err)
}

func (e *PortInUseError) Unwrap() error { return e.Err }

// Start brings the server (and UI) up. It returns once the frontend accepts
// gRPC connections; callers still check readiness with an SDK call because
// namespaces become visible a moment later.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Namespace == "" && o.DatabaseFile != "" {
		return nil, errors.New("devserver: namespace is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	pickedFrontend := o.FrontendPort == 0
	if pickedFrontend {
		port, err := pickPort(o.Host)
		if err != nil {
			return nil, err
		}
		o.FrontendPort = port
	}
	if err := checkPortFree(o.Host, o.FrontendPort); err != nil {
		return nil, &PortInUseError{Name: "Temporal frontend", Port: o.FrontendPort, Err: err}
	}
	if o.UIPort != 0 {
		if err := checkPortFree(o.Host, o.UIPort); err != nil {
			return nil, &PortInUseError{Name: "Temporal UI", Port: o.UIPort, Err: err}
		}
	}
	logLevel := &slog.LevelVar{}
	logLevel.Set(o.LogLevel)
	logger := slogLogger{log: o.Logger.With("component", "temporal-server"), level: logLevel, building: &atomic.Bool{}}
	server, err := o.build(logger, pickedFrontend)
	if err != nil {
		return nil, err
	}
	s := &Server{server: server, address: net.JoinHostPort(o.Host, strconv.Itoa(o.FrontendPort)), logLevel: logLevel}
	if o.UIPort != 0 {
		s.uiAddr = net.JoinHostPort(o.Host, strconv.Itoa(o.UIPort))
		s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			Host:                o.Host,
			Port:                o.UIPort,
			TemporalGRPCAddress: s.address,
			EnableUI:            true,
			DefaultNamespace:    o.Namespace,
			CORS:                uiconfig.CORS{CookieInsecure: true},
			HideLogs:            true,
			DisableNewsFetch:    true,
		}))
		s.uiErr = make(chan error, 1)
		// ui.Start blocks until Stop.
		go func() { s.uiErr <- s.ui.Start() }()
	}
	if err := server.Start(); err != nil {
		if s.ui != nil {
			s.ui.Stop()
		}
		return nil, fmt.Errorf("devserver: start: %w", err)
	}
	return s, nil
}

// build builds the server (binding its listeners) for o, on ports picked
// free for the internal services (and for the frontend when Start picked
// its port: a new pick is written to o.FrontendPort).
func (o *Options) build(logger slogLogger, pickedFrontend bool) (temporal.Server, error) {
	// The internal services' ports (and a frontend port Start picked) are
	// free when picked, but another process may bind one before the
	// server does: tests start many servers side by side, and every
	// outgoing connection takes its local port from the same range. A
	// server whose listener finds its port taken is built again on fresh
	// ports.
	for attempt := 1; ; attempt++ {
		conf, err := o.serverConfig(attempt)
		if err != nil {
			return nil, err
		}
		if attempt == 1 {
			if err := prepareDatabase(conf.Persistence.DataStores[storeName].SQL, *o); err != nil {
				return nil, err
			}
		}
		server, err := o.newServer(conf, logger)
		if err == nil {
			return server, nil
		}
		if attempt == startAttempts || !addressInUse(err) {
			return nil, err
		}
		o.Logger.Info("temporal server: a port picked for it was taken before it bound it; picking again", "attempt", attempt, "error", err)
		if pickedFrontend {
			if o.FrontendPort, err = pickPort(o.Host); err != nil {
				return nil, err
			}
		}
	}
}

// newServer builds the server for conf (its listeners are bound here).
func (o Options) newServer(conf *config.Config, logger slogLogger) (_ temporal.Server, err error) {
	logger.building.Store(true)
	defer logger.building.Store(false)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(buildFatal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("devserver: build server: %w", f)
		}
	}()
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("devserver: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("devserver: claim mapper: %w", err)
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for _, svc := range []primitives.ServiceName{primitives.FrontendService, primitives.MatchingService, primitives.HistoryService, primitives.WorkerService} {
		hosts[svc] = static.SingleLocalHost(net.JoinHostPort(o.Host, strconv.Itoa(conf.Services[string(svc)].RPC.GRPCPort)))
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// Search attributes added at runtime are visible at once.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// One history shard reads its transfer queue (a workflow task
		// after an activity completes, a signal's or an update's task) at
		// most this often per second: at Temporal's 20, each such task
		// waited up to 50 ms for the read, the most of an agent turn's
		// time in Temporal (docs/benchmarks.md, Agent turns). A cluster
		// spreads workflows over hundreds of shards; this server has one.
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): 1000,
	}
	if o.NamespaceCacheRefresh > 0 {
		dyn[dynamicconfig.NamespaceCacheRefreshInterval.Key()] = o.NamespaceCacheRefresh
	}
	server, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("devserver: build server: %w", err)
	}
	return server, nil
}

// UIErrors delivers the UI server's exit error, if it fails after start.
func (s *Server) UIErrors() <-chan error { return s.uiErr }

// Stop shuts the UI and the server down; persisted state stays on disk.
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.Stop()
	}
	// The server logs many warnings while its services wind down.
	s.logLevel.Set(slog.LevelError)
	if err := s.server.Stop(); err != nil {
		slog.Default().Warn("temporal server stop", "error", err)
	}
}

const storeName = "sqlite-default"

func (o Options) serverConfig(attempt int) (*config.Config, error) {
	sqlConf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DatabaseFile == "" {
		sqlConf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		// A database of its own per attempt: a failed attempt's
		// connection may keep its database alive.
		sqlConf.DatabaseName = "holdco-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(o.FrontendPort) + "-" + strconv.Itoa(attempt)
	} else {
		// One connection (the plugin's default) in WAL mode: the server's
		// transactions never wait on each other and readers don't block it.
		sqlConf.ConnectAttributes = map[string]string{"mode": "rwc", "journal_mode": "wal", "busy_timeout": "5000", "synchronous": "NORMAL"}
		sqlConf.DatabaseName = o.DatabaseFile
	}

	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.Host
	conf.Persistence.DefaultStore = storeName
	conf.Persistence.VisibilityStore = storeName
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{storeName: {SQL: sqlConf}}

	httpPort, err := pickPort(o.Host)
	if err != nil {
		return nil, err
	}
	frontendAddr := net.JoinHostPort(o.Host, strconv.Itoa(o.FrontendPort))
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontendAddr,
				HTTPAddress:            net.JoinHostPort(o.Host, strconv.Itoa(httpPort)),
				ClusterID:              "holdco-embedded",
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range []string{"frontend", "history", "matching", "worker"} {
		var svc config.Service
		svc.RPC.BindOnIP = o.Host
		if name == "frontend" {
			svc.RPC.GRPCPort = o.FrontendPort
			svc.RPC.HTTPPort = httpPort
		} else if svc.RPC.GRPCPort, err = pickPort(o.Host); err != nil {
			return nil, err
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontendAddr
	return &conf, nil
}

// prepareDatabase creates the schema on a new file and the namespace when
// missing (both are no-ops on a warm data dir). In memory there is nothing
// to prepare: the SQLite plugin creates the schema when the server
// connects, and the database lives as long as the server's connection.
func prepareDatabase(sqlConf *config.SQL, o Options) error {
	if o.DatabaseFile == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(o.DatabaseFile), 0o755); err != nil {
		return fmt.Errorf("devserver: create data dir: %w", err)
	}
	if _, err := os.Stat(o.DatabaseFile); errors.Is(err, os.ErrNotExist) {
		if err := sqliteschema.SetupSchema(sqlConf); err != nil {
			return fmt.Errorf("devserver: set up schema in %s: %w", o.DatabaseFile, err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return fmt.Errorf("devserver: namespace config: %w", err)
	}
	if err := sqliteschema.CreateNamespaces(sqlConf, ns); err != nil {
		return fmt.Errorf("devserver: create namespace %s: %w", o.Namespace, err)
	}
	return nil
}

func checkPortFree(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}

// startAttempts bounds how often Start builds the server on fresh ports
// after a picked one was taken.
const startAttempts = 5

// pickPort picks the ports Start chooses (a variable: tests hand out a
// taken one).
var pickPort = freePort

// addressInUse reports whether err is a listener's bind refused because
// its address is taken (the server's errors carry only the text).
func addressInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// freePort asks the kernel for an unused port for the server's internal
// services; nothing outside the process talks to them.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("devserver: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
