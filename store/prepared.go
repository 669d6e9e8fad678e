package store

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// preparedPool is the SQLite store's connection pool as gorm sees it: every
// statement is prepared once on the pool and kept, the least recently used
// closed past max, and a transaction runs the pool's statement on its own
// connection (database/sql prepares it there once and keeps it with the
// connection).
//
// It replaces gorm's PrepareStmt, which prepares a statement it first meets
// inside a transaction on that transaction: database/sql cannot reuse such a
// statement once the transaction ended, so gorm prepared it again in every
// later transaction, and the pure-Go SQLite parsed it again each time (a
// fifth of a small commit's CPU; most of the turns' bookkeeping, the charges
// and send_message run only inside transactions).
//
// A statement that cannot be prepared on the pool runs unprepared, as the
// database/sql call without a statement would: inside a transaction that
// created a table, a statement naming it cannot be prepared on another
// connection; its error, if it has one, is the statement's own.
type preparedPool struct {
	db  *sql.DB
	max int

	mu    sync.Mutex
	stmts map[string]*list.Element // of *preparedStmt, most recently used first
	order *list.List
}

type preparedStmt struct {
	query string
	ready chan struct{} // closed once stmt and err are set
	stmt  *sql.Stmt
	err   error
	// users (under the pool's mu) counts the callers between acquire and
	// release, the one preparing included; a statement dropped from the
	// cache is closed when the last one leaves (database/sql refuses a
	// closed statement, and keeps one open itself for the rows and
	// transactions still using it).
	users   int
	dropped bool
}

func newPreparedPool(db *sql.DB, max int) *preparedPool {
	return &preparedPool{db: db, max: max, stmts: map[string]*list.Element{}, order: list.New()}
}

// txPrepareWait bounds a transaction's wait for a pooled connection to
// prepare a statement on: the transaction holds one connection already, and
// a pool whose every connection is held by such a transaction would
// otherwise wait for itself. The statement then runs unprepared.
const txPrepareWait = time.Second

// acquire returns the pool's prepared statement for query, preparing it
// first if no caller did, or nil when it cannot be prepared (the caller
// runs the query unprepared). A statement returned must be released. inTx
// says the caller holds a connection of the pool.
func (p *preparedPool) acquire(ctx context.Context, query string, inTx bool) *preparedStmt {
	p.mu.Lock()
	if el, ok := p.stmts[query]; ok {
		p.order.MoveToFront(el)
		ps := el.Value.(*preparedStmt)
		ps.users++
		p.mu.Unlock()
		<-ps.ready
		if ps.stmt == nil {
			p.release(ps)
			return nil
		}
		return ps
	}
	if inTx {
		if s := p.db.Stats(); s.MaxOpenConnections > 0 && s.InUse >= s.MaxOpenConnections {
			p.mu.Unlock()
			return nil
		}
	}
	ps := &preparedStmt{query: query, ready: make(chan struct{}), users: 1}
	p.stmts[query] = p.order.PushFront(ps)
	var evicted *preparedStmt
	if p.max > 0 && p.order.Len() > p.max {
		back := p.order.Back()
		evicted = back.Value.(*preparedStmt)
		p.dropLocked(evicted)
		if evicted.users > 0 {
			evicted = nil // its last user closes it
		}
	}
	p.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}

	pctx := ctx
	if inTx {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, txPrepareWait)
		defer cancel()
	}
	ps.stmt, ps.err = p.db.PrepareContext(pctx, query)
	close(ps.ready)
	if ps.err != nil {
		p.mu.Lock()
		if el, ok := p.stmts[query]; ok && el.Value.(*preparedStmt) == ps {
			p.dropLocked(ps)
		}
		p.mu.Unlock()
		p.release(ps)
		return nil
	}
	return ps
}

// dropLocked takes ps out of the cache; p.mu is held.
func (p *preparedPool) dropLocked(ps *preparedStmt) {
	if el, ok := p.stmts[ps.query]; ok && el.Value.(*preparedStmt) == ps {
		p.order.Remove(el)
		delete(p.stmts, ps.query)
	}
	ps.dropped = true
}

// release ends a use of ps; the last user of a dropped statement closes
// it.
func (p *preparedPool) release(ps *preparedStmt) {
	p.mu.Lock()
	ps.users--
	last := ps.dropped && ps.users == 0
	p.mu.Unlock()
	if last {
		ps.close()
	}
}

func (ps *preparedStmt) close() {
	if ps.stmt != nil {
		_ = ps.stmt.Close()
	}
}

// done releases ps after a call, and drops its statement when the call
// found the connection broken.
func (p *preparedPool) done(ps *preparedStmt, err error) {
	if errors.Is(err, driver.ErrBadConn) {
		p.mu.Lock()
		p.dropLocked(ps)
		p.mu.Unlock()
	}
	p.release(ps)
}

// Close closes the kept statements (the pool itself is closed by its
// owner).
func (p *preparedPool) Close() {
	p.mu.Lock()
	var idle []*preparedStmt
	for el := p.order.Front(); el != nil; el = el.Next() {
		ps := el.Value.(*preparedStmt)
		ps.dropped = true
		if ps.users == 0 {
			idle = append(idle, ps)
		}
	}
	p.stmts = map[string]*list.Element{}
	p.order.Init()
	p.mu.Unlock()
	for _, ps := range idle {
		ps.close()
	}
}

// GetDBConn is gorm's way to the *sql.DB ((*gorm.DB).DB).
func (p *preparedPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

// Ping is gorm's check at open.
func (p *preparedPool) Ping() error { return p.db.Ping() }

func (p *preparedPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, query)
}

func (p *preparedPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ps := p.acquire(ctx, query, false)
	if ps == nil {
		return p.db.ExecContext(ctx, query, args...)
	}
	res, err := ps.stmt.ExecContext(ctx, args...)
	p.done(ps, err)
	return res, err
}

func (p *preparedPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ps := p.acquire(ctx, query, false)
	if ps == nil {
		return p.db.QueryContext(ctx, query, args...)
	}
	rows, err := ps.stmt.QueryContext(ctx, args...)
	p.done(ps, err)
	return rows, err
}

func (p *preparedPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ps := p.acquire(ctx, query, false)
	if ps == nil {
		return p.db.QueryRowContext(ctx, query, args...)
	}
	row := ps.stmt.QueryRowContext(ctx, args...)
	p.done(ps, row.Err())
	return row
}

// memoryTempKey marks a context whose transactions keep SQLite's temporary
// storage in memory (withMemoryTemp).
type memoryTempKey struct{}

// withMemoryTemp makes the SQLite transactions begun with ctx keep their
// temporary storage in memory: their connection runs PRAGMA
// temp_store=MEMORY before BEGIN and goes back to the pool with the
// default again. For the analytics writer: its multi-row INSERTs and
// upserts inside one transaction need statement journals, which past
// 64 KiB went to a temporary file one write(2) per page (a sixth of the
// fold's CPU, docs/benchmarks.md). It is not the store's setting, since a
// report's COUNT(DISTINCT …) over a large site would then build its
// temporary B-tree in memory too (the file keeps a bounded cache). No
// effect on Postgres.
func withMemoryTemp(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoryTempKey{}, true)
}

// BeginTx makes gorm's transactions run the pool's statements.
func (p *preparedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if ctx.Value(memoryTempKey{}) == nil {
		tx, err := p.db.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		return &preparedTx{tx: tx, pool: p}, nil
	}
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	t := &preparedTx{pool: p, conn: conn}
	if _, err = conn.ExecContext(ctx, "PRAGMA temp_store=MEMORY"); err == nil {
		t.tx, err = conn.BeginTx(ctx, opts)
	}
	if err != nil {
		t.end()
		return nil, err
	}
	return t, nil
}

// preparedTx is one transaction of a preparedPool.
type preparedTx struct {
	tx   *sql.Tx
	pool *preparedPool
	// conn is the connection a withMemoryTemp transaction took from the
	// pool; nil for the others (database/sql gives theirs back).
	conn *sql.Conn
}

// end gives back the connection of a withMemoryTemp transaction with the
// default temporary storage, or closes it when that cannot be set.
func (t *preparedTx) end() {
	if t.conn == nil {
		return
	}
	if _, err := t.conn.ExecContext(context.Background(), "PRAGMA temp_store=DEFAULT"); err != nil {
		_ = t.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = t.conn.Close()
	t.conn = nil
}

// stmt is query's pool statement bound to the transaction, or nil: the
// savepoint statements gorm sends (named after a closure's address) run as
// they are.
func (t *preparedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if unprepared(query) {
		return nil
	}
	ps := t.pool.acquire(ctx, query, true)
	if ps == nil {
		return nil
	}
	// The transaction's statement keeps the pool's open until the
	// transaction ends.
	st := t.tx.StmtContext(ctx, ps.stmt)
	t.pool.release(ps)
	return st
}

func unprepared(query string) bool {
	q := strings.TrimSpace(query)
	for _, p := range []string{"SAVEPOINT", "RELEASE", "ROLLBACK"} {
		if len(q) >= len(p) && strings.EqualFold(q[:len(p)], p) {
			return true
		}
	}
	return false
}

func (t *preparedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, query)
}

func (t *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st := t.stmt(ctx, query)
	if st == nil {
		return t.tx.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (t *preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st := t.stmt(ctx, query)
	if st == nil {
		return t.tx.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (t *preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st := t.stmt(ctx, query)
	if st == nil {
		return t.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (t *preparedTx) StmtContext(ctx context.Context, stmt *sql.Stmt) *sql.Stmt {
	return t.tx.StmtContext(ctx, stmt)
}

func (t *preparedTx) Commit() error {
	err := t.tx.Commit()
	t.end()
	return err
}

func (t *preparedTx) Rollback() error {
	err := t.tx.Rollback()
	t.end()
	return err
}

// GetDBConn is gorm's way to the *sql.DB from a transaction.
func (t *preparedTx) GetDBConn() (*sql.DB, error) { return t.pool.db, nil }
