package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/durationpb"

	"holdco/workflows"
	"holdco/workflows/contract"
)

// Temporal is a namespace of its own on the test binary's Temporal server,
// with holdco's search attributes registered, a client on it and, when
// asked, a worker polling holdco's task queue there.
type Temporal struct {
	Server    *Server
	Client    client.Client
	Namespace string
	TaskQueue string
	Worker    worker.Worker
}

// Server is one test's view of the shared server: workers and clients it
// makes use the test's namespace and stop when the test ends. Its method
// names are temporaltest.TestServer's.
type Server struct {
	tb        testing.TB
	hostPort  string
	namespace string
	client    client.Client
	logger    log.Logger
}

// NewTemporal gives the test a fresh namespace on the test binary's
// Temporal server (started on first use: testenv/temporaldev in a process
// of its own, state in memory) and a worker on contract.TaskQueue
// registered by register. With register nil no worker runs (tests that
// start and stop their own, e.g. Server.NewWorker). Namespaces isolate tests from each other: workflow
// ids, task queues, search attributes and visibility are per namespace,
// so tests calling it may run in parallel.
//
// One server per binary instead of one per test: starting one costs a
// second of CPU, registering a namespace a few milliseconds. Out of the
// test's process, the server is not linked into every test binary (a
// thousand packages), and the race detector does not interleave its
// goroutines with the test's.
func NewTemporal(t testing.TB, register func(worker.Registry)) *Temporal {
	t.Helper()
	hostPort, admin, err := sharedServer()
	if err != nil {
		t.Fatalf("testenv: Temporal test server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), EventualBound)
	defer cancel()
	ns := "test-" + randomHex(6)
	if err := registerNamespace(ctx, admin, ns); err != nil {
		t.Fatalf("testenv: namespace %s: %v", ns, err)
	}
	logger := testLogger(t)
	// Uncompressed, as holdco's client of its embedded server (app's
	// temporalConnection): the tests' server stands in for that one.
	c, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: ns, Logger: logger,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}})
	if err != nil {
		t.Fatalf("testenv: Temporal client: %v", err)
	}
	t.Cleanup(c.Close) // registered first: runs after the workers stopped
	srv := &Server{tb: t, hostPort: hostPort, namespace: ns, client: c, logger: logger}
	env := &Temporal{Server: srv, Client: c, Namespace: ns, TaskQueue: contract.TaskQueue}
	if register != nil {
		env.Worker = srv.NewWorker(contract.TaskQueue, register)
	}
	return env
}

// NewWorker starts a worker on taskQueue in the test's namespace, stopped
// when the test ends (stopping it earlier is fine).
func (s *Server) NewWorker(taskQueue string, register func(worker.Registry)) worker.Worker {
	return s.NewWorkerWithOptions(taskQueue, register, worker.Options{})
}

// NewWorkerWithOptions is NewWorker with the worker's options; a panic in
// a workflow fails it (as temporaltest does) instead of blocking it.
func (s *Server) NewWorkerWithOptions(taskQueue string, register func(worker.Registry), opts worker.Options) worker.Worker {
	s.tb.Helper()
	opts.WorkflowPanicPolicy = worker.FailWorkflow
	// As holdco's worker: activities write as background work.
	opts.Interceptors = append(opts.Interceptors, workflows.WorkerInterceptors()...)
	w := worker.New(s.client, taskQueue, opts)
	register(w)
	if err := w.Start(); err != nil {
		s.tb.Fatalf("testenv: start worker: %v", err)
	}
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	s.tb.Cleanup(stop)
	return stoppable{Worker: w, stop: stop}
}

// stoppable lets a test stop a worker that its cleanup stops again.
type stoppable struct {
	worker.Worker
	stop func()
}

func (w stoppable) Stop() { w.stop() }

// GetDefaultClient is the test's client (Temporal.Client).
func (s *Server) GetDefaultClient() client.Client { return s.client }

// GetDefaultNamespace is the test's namespace.
func (s *Server) GetDefaultNamespace() string { return s.namespace }

// GetFrontendHostPort is the server's gRPC address, for a process under
// test that dials it (TEMPORAL_ADDRESS) with the test's namespace.
func (s *Server) GetFrontendHostPort() string { return s.hostPort }

// NewClientWithOptions is another client, on the test's namespace unless
// opts names one, closed when the test ends.
func (s *Server) NewClientWithOptions(opts client.Options) client.Client {
	s.tb.Helper()
	opts.HostPort = s.hostPort
	if opts.Namespace == "" {
		opts.Namespace = s.namespace
	}
	if opts.Logger == nil {
		opts.Logger = s.logger
	}
	ctx, cancel := context.WithTimeout(context.Background(), EventualBound)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		s.tb.Fatalf("testenv: Temporal client: %v", err)
	}
	s.tb.Cleanup(c.Close)
	return c
}

var shared struct {
	once     sync.Once
	hostPort string
	client   client.Client // on the server's default namespace
	proc     *TemporalProcess
	err      error
}

// sharedServer starts the binary's server on first use. It runs until
// this process exits: it stops when its standard input (kept open by
// shared.proc) closes, and on Linux is killed with its parent.
func sharedServer() (string, client.Client, error) {
	shared.once.Do(func() {
		shared.proc, shared.err = StartTemporalProcess(context.Background(), TemporalProcessOptions{NamespaceRefresh: 500 * time.Millisecond})
		if shared.err != nil {
			return
		}
		shared.hostPort = shared.proc.Address()
		quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithTimeout(context.Background(), EventualBound)
		defer cancel()
		opts := client.Options{HostPort: shared.hostPort, Namespace: "default", Logger: quiet}
		shared.err = until(ctx, func() (bool, error) {
			c, err := client.DialContext(ctx, opts)
			shared.client = c
			return err == nil, err
		})
		if shared.err != nil {
			shared.err = fmt.Errorf("Temporal at %s: %w", shared.hostPort, shared.err)
		}
	})
	return shared.hostPort, shared.client, shared.err
}

// TemporalDevEnv names a prebuilt testenv/temporaldev for the tests (make
// test builds it once for every test binary); without it, or when the file
// is not there (a Makefile target that does not build it), each test
// binary builds it (go build: a no-op while it is up to date) into the
// repository's .cache/bin.
const TemporalDevEnv = "HOLDCO_TEMPORAL_DEV_BIN"

// temporalDevBinary is TemporalDevEnv or a fresh build, without -race (the
// server's code is not holdco's: under the race detector it took three
// times the CPU). The build runs under a file lock: the test binaries of
// one go test run start together.
func temporalDevBinary() (string, error) {
	if p := os.Getenv(TemporalDevEnv); p != "" && fileExists(p) {
		return p, nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	out := filepath.Join(root, ".cache", "bin", "temporaldev")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(out + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building testenv/temporaldev needs go on PATH (or %s naming a built one): %w", TemporalDevEnv, err)
	}
	build := exec.Command(goCmd, "build", "-ldflags=-s -w", "-o", out, "./testenv/temporaldev")
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./testenv/temporaldev: %w\n%s", err, msg)
	}
	return out, nil
}

// CompileFlags are the build flags this binary was built with that change
// how packages compile, so the build cache's keys (make test's -race and
// -gcflags): a go command run with them finds the packages the test build
// compiled instead of compiling them again.
func CompileFlags() []string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var flags []string
	for _, s := range info.Settings {
		switch s.Key {
		case "-race", "-msan", "-asan":
			if s.Value == "true" {
				flags = append(flags, s.Key)
			}
		case "-gcflags", "-asmflags", "-tags":
			flags = append(flags, s.Key+"="+s.Value)
		}
	}
	return flags
}

// registerNamespace registers ns with holdco's search attributes and
// returns once the frontend serves both (as Temporal's own functional
// tests do), then waits for one more cache refresh so that the history
// service, which checks upserted search attributes, has them too.
func registerNamespace(ctx context.Context, c client.Client, ns string) error {
	_, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        ns,
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if err := until(ctx, func() (bool, error) {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
		var nf *serviceerror.NamespaceNotFound
		if errors.As(err, &nf) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if err := until(ctx, func() (bool, error) {
		err := workflows.EnsureSearchAttributes(ctx, c, ns)
		var nf *serviceerror.NamespaceNotFound
		if errors.As(err, &nf) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		return err
	}
	want := contract.SearchAttributes()
	return until(ctx, func() (bool, error) {
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		if err != nil {
			return false, nil
		}
		for name, typ := range want {
			if got, ok := resp.GetCustomAttributes()[name]; !ok || got != typ {
				return false, nil
			}
		}
		return true, nil
	})
}

// until polls cond every 50 ms until it holds, fails, or ctx ends.
func until(ctx context.Context, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return err
			}
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// testLogger sends the SDK's warnings and errors to the test's log while
// the test runs (shown when it fails or with -v); afterwards, and below
// warning, it drops them.
func testLogger(t testing.TB) log.Logger {
	var done atomic.Bool
	t.Cleanup(func() { done.Store(true) })
	return log.NewStructuredLogger(slog.New(&tbHandler{t: t, done: &done}))
}

type tbHandler struct {
	t     testing.TB
	done  *atomic.Bool
	attrs []slog.Attr
}

func (h *tbHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && !h.done.Load()
}

func (h *tbHandler) Handle(_ context.Context, r slog.Record) error {
	if h.done.Load() {
		return nil
	}
	msg := r.Level.String() + " temporal-sdk: " + r.Message
	add := func(a slog.Attr) bool { msg += " " + a.String(); return true }
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	defer func() { _ = recover() }() // the test ended between the check and the log
	h.t.Log(msg)
	return nil
}

func (h *tbHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &tbHandler{t: h.t, done: h.done, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *tbHandler) WithGroup(string) slog.Handler { return h }

// UnreachableTemporal is a Temporal client whose workflow starts all fail
// (with Err, or an error saying the process died before the start): a
// process killed right after its commit, or a Temporal that is down. The
// embedded Client answers everything else (a zero one panics).
type UnreachableTemporal struct {
	client.Client
	Err error
}

// ExecuteWorkflow fails.
func (u UnreachableTemporal) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	if u.Err != nil {
		return nil, u.Err
	}
	return nil, errors.New("injected: the process died before the workflow started")
}
