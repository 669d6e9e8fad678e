package harness

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// ErrNoPostgres: initdb, pg_ctl or postgres is not on PATH.
var ErrNoPostgres = errors.New("initdb, pg_ctl and postgres are not all on PATH")

// Postgres is a private Postgres server: its own data directory (initdb
// into a temporary directory), a free loopback port, trust
// authentication, its socket in its own directory. A harness may stop,
// restart or crash it without touching any other server of the machine.
type Postgres struct {
	Dir     string // the data directory
	Port    int
	LogPath string
	cred    *syscall.Credential // the server's user when the harness runs as root
}

// StartPostgres initializes a server under parent and starts it.
func StartPostgres(ctx context.Context, parent string) (*Postgres, error) {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := exec.LookPath(b); err != nil {
			return nil, ErrNoPostgres
		}
	}
	dir, err := os.MkdirTemp(parent, "pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{Dir: filepath.Join(dir, "data"), Port: FreePort(), LogPath: filepath.Join(dir, "postgres.log")}
	// Postgres refuses to run as root: the server runs as the postgres
	// user then, owning its directory.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if out, err := p.run(ctx, "initdb", "-D", p.Dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	// The socket in the server's own directory; fsync stays on (the
	// default): the harness measures durability.
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 200\n", p.Port, dir)
	f, err := os.OpenFile(filepath.Join(p.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Postgres) run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = filepath.Dir(p.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// Start starts the server and waits until it accepts connections.
func (p *Postgres) Start(ctx context.Context) error {
	if out, err := p.run(ctx, "pg_ctl", "-D", p.Dir, "-l", p.LogPath, "-w", "-t", "300", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, Tail(p.LogPath, 10))
	}
	return nil
}

// Stop stops the server with a pg_ctl shutdown mode (smart, fast,
// immediate) and waits until it is gone.
func (p *Postgres) Stop(ctx context.Context, mode string) error {
	if out, err := p.run(ctx, "pg_ctl", "-D", p.Dir, "-m", mode, "-w", "-t", "120", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w: %s", mode, err, out)
	}
	return nil
}

// Close stops the server at once and removes its directory.
func (p *Postgres) Close() {
	_ = p.Stop(context.Background(), "immediate")
	_ = os.RemoveAll(filepath.Dir(p.Dir))
}

// URL is the address of a database of the server.
func (p *Postgres) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.Port, database)
}

// CreateDatabase creates a database and returns its URL.
func (p *Postgres) CreateDatabase(ctx context.Context, name string) (string, error) {
	db, err := sql.Open("pgx", p.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := db.ExecContext(cctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return "", err
	}
	return p.URL(name), nil
}
