// Package companydb gives every company its own database: a SQLite file
// when holdco itself runs on SQLite (the embedded default), or a database
// and login role on holdco's Postgres server.
package companydb

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite", the same one the Temporal server registers
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
	mu   sync.Mutex
}

// NewSQLite returns the SQLite adapter.
func NewSQLite(root string) (*SQLite, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("companydb: %w", err)
	}
	return &SQLite{root: root}, nil
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
// idempotent.
type Postgres struct {
	admin  *sql.DB
	base   *url.URL
	secret []byte
}

// NewPostgres connects with adminDSN (holdco's own DATABASE_URL).
func NewPostgres(adminDSN string, secret []byte) (*Postgres, error) {
	u, err := url.Parse(adminDSN)
	if err != nil {
		return nil, errors.New("companydb: invalid postgres URL")
	}
	db, err := sql.Open("pgx", adminDSN)
	if err != nil {
		return nil, fmt.Errorf("companydb: %w", err)
	}
	db.SetMaxOpenConns(4)
	return &Postgres{admin: db, base: u, secret: secret}, nil
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
	u.RawQuery = q.Encode()
	return u.String()
}

// Ensure creates the role and the database (idempotent, concurrency-safe)
// and makes the database reachable only by its role.
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
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	if !exists {
		if _, err := conn.ExecContext(ctx, "CREATE ROLE "+ident+" LOGIN"); err != nil && !isCode(err, "42710") {
			return "", fmt.Errorf("companydb: create role: %w", err)
		}
	}
	// The password is hex, so it is safe as a literal; setting it every time
	// heals a role whose password drifted.
	if _, err := conn.ExecContext(ctx, "ALTER ROLE "+ident+" LOGIN PASSWORD '"+p.password(companyID)+"'"); err != nil {
		return "", fmt.Errorf("companydb: set password: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("companydb: %w", err)
	}
	if !exists {
		// CREATE DATABASE cannot run in a transaction and has no IF NOT EXISTS.
		if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+ident+" OWNER "+ident); err != nil && !isCode(err, "42P04") {
			return "", fmt.Errorf("companydb: create database: %w", err)
		}
	}
	for _, stmt := range []string{
		"REVOKE ALL ON DATABASE " + ident + " FROM PUBLIC",
		"GRANT ALL ON DATABASE " + ident + " TO " + ident,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return "", fmt.Errorf("companydb: %s: %w", stmt, err)
		}
	}
	return name, nil
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
