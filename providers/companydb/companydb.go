// Package companydb gives every company its own database: a SQLite file
// when holdco itself runs on SQLite (the embedded default), or a database
// and login role on holdco's Postgres server.
package companydb

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the database/sql driver "pgx"
	_ "modernc.org/sqlite"           // driver "sqlite", the same one the Temporal server registers
)

func validID(companyID string) error {
	if _, err := uuid.Parse(companyID); err != nil {
		return fmt.Errorf("companydb: company id %q is not a UUID", companyID)
	}
	return nil
}

// SQLite keeps one database file per company under root.
type SQLite struct {
	root string
	// absRoot is root as an absolute path (SQLite's messages name files
	// by their full path).
	absRoot string
	mu      sync.Mutex
}

// NewSQLite returns the SQLite adapter.
func NewSQLite(root string) (*SQLite, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("companydb: %w", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("companydb: %w", err)
	}
	return &SQLite{root: root, absRoot: abs}, nil
}

func (s *SQLite) file(companyID string) string { return filepath.Join(s.root, companyID+".db") }

// DSN is the company's connection string.
func (s *SQLite) DSN(companyID string) string {
	return "file:" + s.file(companyID) + "?_pragma=journal_mode(wal)&_pragma=busy_timeout(5000)"
}

// Ensure creates the company's database file (idempotent). It is built
// under a temporary name and renamed, so a crash never leaves a half-made
// file that Check would accept.
func (s *SQLite) Ensure(ctx context.Context, companyID string) (string, error) {
	if err := validID(companyID); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Check(ctx, companyID) == nil {
		return s.file(companyID), nil
	}
	tmp := filepath.Join(s.root, ".tmp-"+companyID+".db")
	_ = os.Remove(tmp)
	db, err := sql.Open("sqlite", "file:"+tmp+"?_pragma=journal_mode(delete)")
	if err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE holdco_database (company_id TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP); INSERT INTO holdco_database (company_id) VALUES (?)", companyID)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.file(companyID))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("companydb: create %s: %w", companyID, err)
	}
	return s.file(companyID), nil
}

// Check opens the company's file (it must exist) and queries it.
func (s *SQLite) Check(ctx context.Context, companyID string) error {
	if err := validID(companyID); err != nil {
		return err
	}
	if _, err := os.Stat(s.file(companyID)); err != nil {
		return fmt.Errorf("companydb: %w", err)
	}
	db, err := sql.Open("sqlite", s.DSN(companyID)+"&mode=rw")
	if err != nil {
		return fmt.Errorf("companydb: %w", err)
	}
	defer db.Close()
	var owner string
	if err := db.QueryRowContext(ctx, "SELECT company_id FROM holdco_database").Scan(&owner); err != nil {
		return fmt.Errorf("companydb: query %s: %w", companyID, err)
	}
	if owner != companyID {
		return fmt.Errorf("companydb: %s holds another company's database", companyID)
	}
	return nil
}

// Drop deletes the company's database file.
func (s *SQLite) Drop(_ context.Context, companyID string) error {
	if err := validID(companyID); err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(s.file(companyID) + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Postgres keeps a database and a login role per company on the server
// of the admin connection. The role's password is derived from a secret
// (HMAC of the company id), so it is never stored and Ensure stays
// idempotent. It is sent to the server only as a SCRAM-SHA-256 verifier
// (scramVerifier), so a statement log shows no password.
//
// Isolation: a company's role may connect only to its own database (its
// owner: CONNECT, TEMPORARY, CREATE there). Every Ensure revokes PUBLIC's
// CONNECT and TEMPORARY on the company's database and on holdco's own
// database (where the admin role may), and resets the role to NOSUPERUSER
// NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS, a member of no other
// role (so none of the server's file, program or settings roles). The
// database is made from template0. Databases holdco does
// not own by purpose (postgres, template1, others its role happens to
// own) are shared with other users of the server: holdco does not change
// them but logs once, for each still open to PUBLIC, the statement an
// operator should run (docs/companies.md).
type Postgres struct {
	admin  *sql.DB
	base   *url.URL
	secret []byte
	logger *slog.Logger

	warnMu sync.Mutex
	warned map[string]bool
}

// NewPostgres connects with adminDSN (holdco's own DATABASE_URL). logger
// receives the warnings about databases left open to every role; nil
// discards them.
func NewPostgres(adminDSN string, secret []byte, logger *slog.Logger) (*Postgres, error) {
	return newPostgres(adminDSN, secret, logger, nil)
}

// newPostgres is NewPostgres with a pgx tracer on the admin connections
// (tests read the statements sent).
func newPostgres(adminDSN string, secret []byte, logger *slog.Logger, tracer pgx.QueryTracer) (*Postgres, error) {
	u, err := url.Parse(adminDSN)
	if err != nil {
		return nil, errors.New("companydb: invalid postgres URL")
	}
	cfg, err := pgx.ParseConfig(adminDSN)
	if err != nil {
		return nil, errors.New("companydb: invalid postgres URL")
	}
	cfg.Tracer = tracer
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(4)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Postgres{admin: db, base: u, secret: secret, logger: logger, warned: map[string]bool{}}, nil
}

// Close releases the admin connections.
func (p *Postgres) Close() error { return p.admin.Close() }

// Name is the company's database and role name.
func Name(companyID string) string { return "holdco_co_" + strings.ReplaceAll(companyID, "-", "") }

func (p *Postgres) password(companyID string) string {
	m := hmac.New(sha256.New, p.secret)
	m.Write([]byte("company-db:" + companyID))
	return hex.EncodeToString(m.Sum(nil))
}

// DSN is the company's connection string (with its derived password).
func (p *Postgres) DSN(companyID string) string {
	u := *p.base
	u.User = url.UserPassword(Name(companyID), p.password(companyID))
	u.Path = "/" + Name(companyID)
	q := u.Query()
	q.Del("search_path")
	q.Del("password")
	u.RawQuery = q.Encode()
	return u.String()
}

// Ensure creates the role and the database (idempotent, concurrency-safe)
// and makes the database reachable only by its role. It applies the role
// attributes and privileges on every call, so companies created before a
// rule was added get it when they are ensured again (heal, provision).
func (p *Postgres) Ensure(ctx context.Context, companyID string) (string, error) {
	if err := validID(companyID); err != nil {
		return "", err
	}
	name := Name(companyID)
	ident := pgx.Identifier{name}.Sanitize()
	// One Ensure per company at a time, across processes: concurrent role
	// changes fail with "tuple concurrently updated".
	conn, err := p.admin.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext($1))", name); err != nil {
		return "", fmt.Errorf("companydb: lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", name)
	verifier, err := scramVerifier(p.password(companyID))
	if err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	if !exists {
		if _, err := conn.ExecContext(ctx, "CREATE ROLE "+ident+" "+roleAttributes); err != nil && !isCode(err, "42710") {
			return "", fmt.Errorf("companydb: create role: %w", err)
		}
	}
	// Setting the password every time heals a role whose password drifted.
	// Utility statements take no parameters, so it is a literal: the SCRAM
	// verifier (base64 and "$:"), never the password.
	if _, err := conn.ExecContext(ctx, "ALTER ROLE "+ident+" WITH LOGIN NOCREATEDB NOCREATEROLE PASSWORD '"+verifier+"'"); err != nil {
		return "", fmt.Errorf("companydb: set role attributes: %w", err)
	}
	var super, repl, bypass bool
	if err := conn.QueryRowContext(ctx, "SELECT rolsuper, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = $1", name).
		Scan(&super, &repl, &bypass); err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	if super || repl || bypass {
		// Only a superuser can have set these, and only one can clear them.
		if _, err := conn.ExecContext(ctx, "ALTER ROLE "+ident+" NOSUPERUSER NOREPLICATION NOBYPASSRLS"); err != nil {
			return "", fmt.Errorf("companydb: role %s has superuser, replication or bypassrls and it cannot be cleared: %w", name, err)
		}
	}
	if err := revokeMemberships(ctx, conn, name); err != nil {
		return "", err
	}
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	if !exists {
		// CREATE DATABASE cannot run in a transaction and has no IF NOT EXISTS.
		// From template0: extensions an operator installed in template1
		// (dblink, file_fdw…) are not the company's.
		if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+ident+" OWNER "+ident+" TEMPLATE template0"); err != nil && !isCode(err, "42P04") {
			return "", fmt.Errorf("companydb: create database: %w", err)
		}
	}
	for _, stmt := range []string{
		"REVOKE ALL ON DATABASE " + ident + " FROM PUBLIC",
		"GRANT CONNECT, TEMPORARY, CREATE ON DATABASE " + ident + " TO " + ident,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return "", fmt.Errorf("companydb: %s: %w", stmt, err)
		}
	}
	if err := p.closeSharedDatabases(ctx, conn); err != nil {
		return "", err
	}
	return name, nil
}

// revokeMemberships makes the company's role a member of no other role:
// the server's predefined roles (pg_read_server_files,
// pg_write_server_files, pg_execute_server_program, pg_read_all_settings…)
// would give it the server's files, programs and settings, and any other
// role its privileges. A membership that cannot be revoked stops Ensure.
func revokeMemberships(ctx context.Context, conn *sql.Conn, name string) error {
	rows, err := conn.QueryContext(ctx, `SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid
WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = $1) ORDER BY r.rolname`, name)
	if err != nil {
		return fmt.Errorf("companydb: list role memberships: %w", err)
	}
	var granted []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return fmt.Errorf("companydb: list role memberships: %w", err)
		}
		granted = append(granted, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("companydb: list role memberships: %w", err)
	}
	for _, r := range granted {
		stmt := "REVOKE " + pgx.Identifier{r}.Sanitize() + " FROM " + pgx.Identifier{name}.Sanitize()
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("companydb: role %s is a member of %s and it cannot be revoked: %w", name, r, err)
		}
	}
	return nil
}

// roleAttributes are a company role's attributes at creation; Ensure
// enforces them again on existing roles.
const roleAttributes = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS"

// sharedDatabases lists the databases every role can still connect to (or
// create temporary tables in) through PUBLIC that holdco closes to company
// roles: holdco's own, postgres and template1, and any other the admin
// role owns. Company databases are excluded (their Ensure handles them).
// can says whether the admin role may change the database's privileges.
const sharedDatabases = `
SELECT d.datname, d.datname = current_database() AND pg_has_role(current_user, d.datdba, 'MEMBER') AS can
FROM pg_database d
WHERE d.datallowconn
  AND (d.datname IN (current_database(), 'postgres', 'template1')
       OR d.datdba = (SELECT oid FROM pg_roles WHERE rolname = current_user))
  AND d.datname NOT LIKE 'holdco\_co\_%'
  AND (has_database_privilege('public', d.oid, 'CONNECT') OR has_database_privilege('public', d.oid, 'TEMPORARY'))
ORDER BY d.datname`

// closeSharedDatabases revokes PUBLIC's CONNECT and TEMPORARY on holdco's
// own database when the admin role may change it (it owns it, is a member
// of its owner, or is a superuser); every shared database still open
// afterwards is logged once, with what an operator should run. The owner (and superusers) keep
// their access. A server-wide advisory lock keeps concurrent Ensures from
// changing one database's ACL at once ("tuple concurrently updated").
func (p *Postgres) closeSharedDatabases(ctx context.Context, conn *sql.Conn) error {
	list := func() (closable, all []string, err error) {
		rows, err := conn.QueryContext(ctx, sharedDatabases)
		if err != nil {
			return nil, nil, fmt.Errorf("companydb: list databases: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var can bool
			if err := rows.Scan(&name, &can); err != nil {
				return nil, nil, fmt.Errorf("companydb: list databases: %w", err)
			}
			all = append(all, name)
			if can {
				closable = append(closable, name)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("companydb: list databases: %w", err)
		}
		return closable, all, nil
	}
	closable, open, err := list()
	if err != nil {
		return err
	}
	if len(closable) > 0 {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext('holdco shared databases'))"); err != nil {
			return fmt.Errorf("companydb: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('holdco shared databases'))")
		if closable, _, err = list(); err != nil { // another Ensure may have closed them
			return err
		}
		for _, name := range closable {
			stmt := "REVOKE CONNECT, TEMPORARY ON DATABASE " + pgx.Identifier{name}.Sanitize() + " FROM PUBLIC"
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("companydb: %s: %w", stmt, err)
			}
		}
		if _, open, err = list(); err != nil {
			return err
		}
	}
	for _, name := range open {
		p.warnOnce(name)
	}
	return nil
}

func (p *Postgres) warnOnce(database string) {
	p.warnMu.Lock()
	seen := p.warned[database]
	p.warned[database] = true
	p.warnMu.Unlock()
	if !seen {
		p.logger.Warn("company database roles can connect to a database shared with the server's other users; an operator should run the statement as its owner",
			"database", database, "statement", "REVOKE CONNECT, TEMPORARY ON DATABASE "+pgx.Identifier{database}.Sanitize()+" FROM PUBLIC")
	}
}

// scramIterations is Postgres's default (scram_iterations) and RFC 7677's
// minimum.
const scramIterations = 4096

// scramVerifier returns the SCRAM-SHA-256 verifier Postgres stores for
// password (RFC 5802 / 7677): a random 16-byte salt, SaltedPassword =
// PBKDF2-HMAC-SHA-256(password, salt, 4096), StoredKey =
// SHA-256(HMAC(SaltedPassword, "Client Key")) and ServerKey =
// HMAC(SaltedPassword, "Server Key"), written as
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey> in base64.
// Postgres stores a verifier given to PASSWORD as it is. The passwords are
// hex, which SASLprep leaves unchanged.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scramVerifierWith(password, salt, scramIterations)
}

func scramVerifierWith(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	storedKey := sha256.Sum256(mac(salted, "Client Key"))
	serverKey := mac(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

// Check connects as the company's role to its database and queries it.
func (p *Postgres) Check(ctx context.Context, companyID string) error {
	if err := validID(companyID); err != nil {
		return err
	}
	db, err := sql.Open("pgx", p.DSN(companyID))
	if err != nil {
		return fmt.Errorf("companydb: %w", err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("companydb: connect as %s: %w", Name(companyID), err)
	}
	return nil
}

// Drop removes the database and the role.
func (p *Postgres) Drop(ctx context.Context, companyID string) error {
	if err := validID(companyID); err != nil {
		return err
	}
	ident := pgx.Identifier{Name(companyID)}.Sanitize()
	if _, err := p.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("companydb: drop database: %w", err)
	}
	if _, err := p.admin.ExecContext(ctx, "DROP ROLE IF EXISTS "+ident); err != nil {
		return fmt.Errorf("companydb: drop role: %w", err)
	}
	return nil
}

func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
