// Package store is holdco's only door to its database. It opens SQLite or
// Postgres from one DSN, applies the versioned migrations, and offers
// tenant-scoped queries on the rows in models/. Every method takes ctx;
// methods that read or write a tenant's rows take the tenant as a scope
// (CompanyScope, ConglomerateScope, AdminScope) that only the
// authorization step or the worker's System* producers make (scope.go). Multi-statement work runs in transactions opened
// here (InTx), so callers never hold a *gorm.DB.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"holdco/models"
)

// Dialect names returned by (*Store).Dialect.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Store wraps one database connection pool, or one transaction on it.
type Store struct {
	db      *gorm.DB
	dialect string
	logger  *slog.Logger
	// inTx marks a Store handed to an InTx callback; it must not be closed.
	inTx bool
	// writeGate (SQLite only) queues the process's transactions before
	// they BEGIN: SQLite lets one writer in at a time and its busy handler
	// retries by sleeping up to 100 ms, so without a queue a writer that
	// commits and begins again at once (the analytics writer under a
	// capture flood) keeps the lock while request writes sleep for
	// seconds. Requests' writes go before background work's (gate.go).
	// Shared by the Store and its transactions.
	writeGate *writeGate
	// hooks are the listeners (OnAccountChange), shared likewise.
	hooks *hooks
	// tracer makes the spans of the statements that do not go through
	// GORM's callbacks (pipeline); nil: none (WithTracerProvider).
	tracer trace.Tracer
}

// gateWait bounds the wait for the write gate: the DSN's busy timeout.
// A transaction that waited that long goes on to SQLite's own busy
// handler (as without the gate), so a caller that nests transactions on
// the root Store cannot hang on the gate.
const gateWait = 5 * time.Second

// enterGate waits for the SQLite write gate; the returned func leaves it.
// Postgres, and a transaction already inside one, pass at once.
func (s *Store) enterGate(ctx context.Context) func() {
	if s.writeGate == nil || s.inTx {
		return func() {}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return s.writeGate.enter(ctx, IsBackground(ctx), gateWait)
}

// now is the clock of every timestamp the store writes: UTC, cut to
// microseconds because Postgres keeps no more, so a value read back equals
// the value written on both dialects.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Dialect reports which database is behind the store: "sqlite" or
// "postgres".
func (s *Store) Dialect() string { return s.dialect }

// Ping checks that the database answers a query (GET /health).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.WithContext(ctx).Exec("SELECT 1").Error; err != nil {
		return fmt.Errorf("store: ping %s: %w", s.dialect, err)
	}
	return nil
}

// Close releases the connection pool.
func (s *Store) Close() error {
	if s.inTx {
		return errors.New("store: close: called on a transaction; the transaction ends when the InTx callback returns")
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	if p, ok := s.db.ConnPool.(*preparedPool); ok {
		p.Close()
	}
	if err := sqlDB.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// gateSingleWrites puts the single-statement writes made outside a
// transaction (gorm's create, update, delete and Exec) in the write
// gate's queue too, so a request's one-line update does not starve
// behind back-to-back transactions either.
func (s *Store) gateSingleWrites() error {
	const key = "holdco:gate_leave"
	enter := func(db *gorm.DB) {
		if _, inTx := db.Statement.ConnPool.(*sql.Tx); inTx {
			return
		}
		if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
			return
		}
		db.InstanceSet(key, s.enterGate(db.Statement.Context))
	}
	leave := func(db *gorm.DB) {
		if v, ok := db.InstanceGet(key); ok {
			if f, ok := v.(func()); ok {
				f()
			}
		}
	}
	cb := s.db.Callback()
	for _, err := range []error{
		cb.Create().Before("gorm:create").Register("holdco:gate_enter", enter),
		cb.Create().After("gorm:create").Register("holdco:gate_leave", leave),
		cb.Update().Before("gorm:update").Register("holdco:gate_enter", enter),
		cb.Update().After("gorm:update").Register("holdco:gate_leave", leave),
		cb.Delete().Before("gorm:delete").Register("holdco:gate_enter", enter),
		cb.Delete().After("gorm:delete").Register("holdco:gate_leave", leave),
		cb.Raw().Before("gorm:raw").Register("holdco:gate_enter", enter),
		cb.Raw().After("gorm:raw").Register("holdco:gate_leave", leave),
	} {
		if err != nil {
			return fmt.Errorf("store: write gate: %w", err)
		}
	}
	return nil
}

// InTx runs fn in one transaction and commits when fn returns nil; any
// error (or panic) rolls it back and is returned unchanged, except that a
// database that cannot be reached (a failed begin or commit, a raw driver
// error of fn) is models.ErrUnavailable like every store error: a Postgres
// crash between a write and its commit answered 500 "conn closed" before,
// not 503. The *Store given to fn works on the transaction; use only it
// inside fn.
//
// On SQLite every transaction begins IMMEDIATE (the DSN sets _txlock), so
// transactions that read then write are serialized and cannot lose updates
// or deadlock on lock upgrades; the process's transactions wait for the
// lock in the write gate's order (requests' first, then background
// work's, gate.go), so none starves. On Postgres the isolation level is READ
// COMMITTED: a read-then-write that must not race needs a lock or a unique
// constraint. Calling InTx on a transaction's Store opens a savepoint.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	defer s.enterGate(ctx)()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&Store{db: tx, dialect: s.dialect, logger: s.logger, inTx: true, writeGate: s.writeGate, hooks: s.hooks})
	})
	if err != nil && !errors.Is(err, models.ErrUnavailable) && IsUnavailable(err) {
		return wrap("transaction", err)
	}
	return err
}

// existing names a column of the row already stored, inside an upsert's
// DO UPDATE SET: Postgres needs the table qualifier (the bare name is
// ambiguous with EXCLUDED), while SQLite accepts only the bare name there.
func (s *Store) existing(table, column string) string {
	if s.dialect == DialectPostgres {
		return table + "." + column
	}
	return column
}
