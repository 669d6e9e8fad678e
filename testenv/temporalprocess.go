package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TemporalProcessOptions configure a TemporalProcess.
type TemporalProcessOptions struct {
	// DatabaseFile keeps the server's state (it survives a restart); empty
	// keeps it in memory.
	DatabaseFile string
	// Host is the IP every listener binds to (default 127.0.0.1).
	Host string
	// Port is the frontend's port (0: a free one); UIPort the Web UI's (0:
	// no UI).
	Port, UIPort int
	// Namespace is created at start, with holdco's search attributes
	// (required with DatabaseFile; in memory tests register their own).
	Namespace string
	// NamespaceRefresh is how soon a namespace registered later reaches
	// every service (0: Temporal's default).
	NamespaceRefresh time.Duration
	// LogLevel filters the server's logs, which go to the error a failed
	// start returns: debug, info, warn or error (empty: error).
	LogLevel string
}

// TemporalProcess is holdco's embedded Temporal server (package
// devserver) running in a process of its own (testenv/temporaldev, built
// without -race), so that a test binary does not link Temporal's server.
// NewTemporal's shared server is one; app's tests of the embedded default
// start one with a database file as `holdco serve` would in its own
// process. It exits when it is stopped, when the test binary's end closes
// its standard input, or (on Linux) when the test binary dies.
type TemporalProcess struct {
	addr, uiAddr string
	cmd          *exec.Cmd
	stdin        io.WriteCloser
	logs         *LogBuffer
	exited       chan struct{} // closed when the process has exited
	uiErr        chan error
	stopOnce     sync.Once
	stopping     chan struct{}
}

// PortInUseError is a configured port that another program holds.
type PortInUseError struct{ Port int }

func (e *PortInUseError) Error() string { return fmt.Sprintf("port %d is in use", e.Port) }

// StartTemporalProcess starts a server and returns once its frontend
// accepts connections (the namespace may become visible a moment later).
func StartTemporalProcess(ctx context.Context, o TemporalProcessOptions) (*TemporalProcess, error) {
	bin, err := temporalDevBinary()
	if err != nil {
		return nil, err
	}
	args := []string{"-stdin"}
	if o.LogLevel != "" {
		args = append(args, "-log-level", o.LogLevel)
	}
	if o.Host != "" {
		args = append(args, "-host", o.Host)
	}
	args = append(args, "-port", strconv.Itoa(o.Port), "-ui-port", strconv.Itoa(o.UIPort))
	if o.DatabaseFile != "" {
		args = append(args, "-db", o.DatabaseFile)
	}
	if o.Namespace != "" {
		args = append(args, "-namespace", o.Namespace)
	}
	if o.NamespaceRefresh > 0 {
		args = append(args, "-namespace-refresh", o.NamespaceRefresh.String())
	}
	// A free port is picked just before the server binds it, so another
	// process can take it in between: try again then.
	for attempt := 1; ; attempt++ {
		p, err := execTemporalDev(ctx, bin, args)
		var inUse *PortInUseError
		if err == nil || attempt == 3 || !(errors.As(err, &inUse) && o.Port == 0 && inUse.Port != o.UIPort) {
			return p, err
		}
	}
}

// temporalDevCommand runs the tests' Temporal server. make test builds it
// with -race and its own code uninstrumented, so that the libraries it
// shares with the test binaries compile once (the Makefile's
// temporaldev). Its race reports are the detector's view of gRPC code
// ordered by the uninstrumented server's atomics, not holdco's races:
// they stay in its log and do not change its exit status.
func temporalDevCommand(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" exitcode=0"))
	return cmd
}

func execTemporalDev(ctx context.Context, bin string, args []string) (*TemporalProcess, error) {
	cmd := temporalDevCommand(bin, args...)
	cmd.SysProcAttr = dieWithParent()
	p := &TemporalProcess{cmd: cmd, logs: &LogBuffer{}, exited: make(chan struct{}), stopping: make(chan struct{})}
	cmd.Stderr = p.logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(p.exited)
	}()
	fail := func(err error) (*TemporalProcess, error) {
		_ = cmd.Process.Kill()
		<-p.exited
		return nil, fmt.Errorf("%s: %w\n%s", bin, err, p.logs.String())
	}
	select {
	case l, ok := <-line:
		if port, found := strings.CutPrefix(l, "port-in-use "); found {
			<-p.exited
			n, _ := strconv.Atoi(port)
			return nil, &PortInUseError{Port: n}
		}
		fields := strings.Fields(l)
		if !ok || len(fields) < 2 || fields[0] != "listening" {
			return fail(fmt.Errorf("exited before it served (%q)", l))
		}
		p.addr = fields[1]
		if len(fields) == 4 && fields[2] == "ui" {
			p.uiAddr = fields[3]
			p.uiErr = make(chan error, 1)
		}
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(EventualBound):
		return fail(fmt.Errorf("did not serve within %s", EventualBound))
	}
	go func() {
		<-p.exited
		select {
		case <-p.stopping:
		default:
			// It serves until stopped: an exit before is a failure, which
			// the embedded default reports as its UI's.
			if p.uiErr != nil {
				p.uiErr <- fmt.Errorf("%s exited: %v\n%s", bin, waitErr, p.logs.String())
			}
		}
	}()
	return p, nil
}

// Address is the frontend's host:port.
func (p *TemporalProcess) Address() string { return p.addr }

// UIAddress is the Web UI's host:port, empty without one.
func (p *TemporalProcess) UIAddress() string { return p.uiAddr }

// UIErrors delivers an error if the server exits before Stop (nil
// without a UI).
func (p *TemporalProcess) UIErrors() <-chan error { return p.uiErr }

// Stop closes its standard input, so it shuts down, and waits for its
// exit (killing it if that takes longer than EventualBound).
func (p *TemporalProcess) Stop() {
	p.stopOnce.Do(func() {
		close(p.stopping)
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(EventualBound):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}
