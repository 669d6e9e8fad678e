// Package harness is what the programs under scripts/ that drive a real
// holdco binary from outside share: OS processes that can be killed -9
// and restarted on the same data (Proc), a private Postgres server
// (Postgres), and the client side of a user (Call, SignIn).
package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one OS process (a holdco role, a standalone Temporal): its
// command line and environment are kept so a kill -9 can be followed by
// a restart on the same data directory and ports. Its output is
// appended to LogPath.
type Proc struct {
	Name    string
	Bin     string
	Args    []string
	Env     []string
	Dir     string // its data directory (and working directory)
	LogPath string
	Ready   string // URL answering 200 once the process serves
	Metrics string // its metrics listener (HOLDCO_METRICS_ADDR), host:port

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

// Start starts the process (again, after a kill or a stop).
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.starts++
	fmt.Fprintf(logf, "\n=== harness: start %d of %s\n", p.starts, p.Name)
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Env = p.Env
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a kill reaches the process only, and an
	// interrupt of the harness's terminal does not reach it (the harness
	// stops it).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	return nil
}

// Exited is closed when the running process exits.
func (p *Proc) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Starts is how many times the process was started.
func (p *Proc) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// WaitReady polls the process's readiness URL until it answers 200, the
// process exits, or the bound passes.
func (p *Proc) WaitReady(bound time.Duration) error {
	deadline := time.Now().Add(bound)
	c := &http.Client{Timeout: 5 * time.Second}
	exited := p.Exited()
	for {
		select {
		case <-exited:
			return fmt.Errorf("%s exited before it was ready; its log: %s\n%s", p.Name, p.LogPath, Tail(p.LogPath, 15))
		default:
		}
		if resp, err := c.Get(p.Ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after %s; its log: %s\n%s", p.Name, p.Ready, bound, p.LogPath, Tail(p.LogPath, 15))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Kill9 sends SIGKILL and waits for the exit.
func (p *Proc) Kill9() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Stop asks for a graceful shutdown (SIGTERM), then kills after a bound.
func (p *Proc) Stop() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

// PID is the running process's id (0 before the first start).
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Tail is the last n lines of a file, indented.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// FreePort asks the kernel for a free loopback port.
func FreePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Addr is a free loopback host:port.
func Addr() string { return "127.0.0.1:" + strconv.Itoa(FreePort()) }

// FirstLine returns the first line of a process's output that contains
// want, waiting up to bound (the standalone Temporal's ready line).
func FirstLine(path, want string, bound time.Duration) (string, error) {
	return LineAfter(path, 0, want, bound)
}

// LineAfter returns the first line that contains want in the file after
// its first offset bytes (what a restarted process wrote), waiting up to
// bound.
func LineAfter(path string, offset int64, want string, bound time.Duration) (string, error) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if int64(len(b)) > offset {
			sc := bufio.NewScanner(bytes.NewReader(b[offset:]))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), want) {
					return sc.Text(), nil
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return "", fmt.Errorf("no line with %q in %s after %s:\n%s", want, path, bound, Tail(path, 15))
}

// Size is a file's size (0 when it does not exist): an offset for
// LineAfter.
func Size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Run runs the binary once (migrate, admin commands) and returns stdout.
func Run(ctx context.Context, bin string, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Environ is a clean environment: PATH and HOME from the harness, then
// the settings given (nothing else of the caller's environment leaks in).
func Environ(settings map[string]string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	return env
}

// Merge is the union of maps, later ones winning.
func Merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Mkdir makes the directory joined from parts and returns it.
func Mkdir(parts ...string) string {
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		panic(err)
	}
	return d
}

// Eventually polls cond until it holds or the bound passes.
func Eventually(bound time.Duration, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
}

// Build compiles holdco's binary (./cmd/holdco of the module in the
// working directory) into out.
func Build(ctx context.Context, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/holdco")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}
