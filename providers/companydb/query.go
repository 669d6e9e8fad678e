package companydb

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Query limits.
const (
	QueryRows    = 500
	QueryTimeout = 5 * time.Second
)

// QueryResult is what a statement answered: columns and rows (at most
// QueryRows; Truncated says there were more), or the rows a write changed.
type QueryResult struct {
	Columns      []string
	Rows         [][]any
	Truncated    bool
	RowsAffected int64
}

// ErrStatement is the company's SQL being wrong (a syntax error, a write
// in read-only mode, a timeout); its text is the database's message.
type ErrStatement struct {
	Msg   string
	cause error // the driver's error
}

func (e *ErrStatement) Error() string { return e.Msg }

func (e *ErrStatement) Unwrap() error { return e.cause }

// ErrNoDatabase: the company's database does not exist (not provisioned).
var ErrNoDatabase = errors.New("companydb: the company has no database")

// Query runs one statement on the company's own SQLite database: read-only
// on a read-only connection (query_only), bounded by QueryTimeout and
// QueryRows.
func (s *SQLite) Query(ctx context.Context, companyID, stmt string, readOnly bool) (QueryResult, error) {
	return s.query(ctx, companyID, stmt, readOnly, "")
}

// QueryOnce runs one writing statement for the call effectID (see
// CallsTable): a call that ran already answers its stored result and runs
// nothing.
func (s *SQLite) QueryOnce(ctx context.Context, companyID, stmt, effectID string) (QueryResult, error) {
	return s.query(ctx, companyID, stmt, false, effectID)
}

func (s *SQLite) query(ctx context.Context, companyID, stmt string, readOnly bool, effectID string) (QueryResult, error) {
	if err := validID(companyID); err != nil {
		return QueryResult{}, err
	}
	if _, err := os.Stat(s.file(companyID)); err != nil {
		return QueryResult{}, ErrNoDatabase
	}
	dsn := s.DSN(companyID)
	if readOnly {
		dsn = "file:" + s.file(companyID) + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return QueryResult{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return QueryResult{}, s.scrub(err)
	}
	defer conn.Close()
	if err := sandbox(conn); err != nil {
		return QueryResult{}, err
	}
	res, err := run(ctx, conn, stmt, readOnly, effectID, nil)
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_AUTH {
		return QueryResult{}, &ErrStatement{Msg: refusedBySandbox}
	}
	return res, s.scrub(err)
}

// refusedBySandbox is the answer to a statement the SQLite authorizer
// denied (sandbox.go).
const refusedBySandbox = "not authorized: a statement reaches only the company's own database " +
	"(no ATTACH, DETACH or VACUUM INTO, no file or extension functions, and PRAGMA only for the schema and counters: " +
	"table_info, table_list, index_list, foreign_key_list, integrity_check, user_version…)"

// scrub takes the data directory's path out of an error, so no answer
// names a file of the server's.
func (s *SQLite) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, dir := range []string{s.absRoot, s.root} {
		if dir != "" && dir != "." {
			msg = strings.ReplaceAll(msg, dir, "…")
		}
	}
	var se *ErrStatement
	if errors.As(err, &se) {
		return &ErrStatement{Msg: msg}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// Query runs one statement on the company's own Postgres database as its
// own role (which reaches no other database): read-only in a READ ONLY
// transaction, with statement_timeout, bounded by QueryRows.
func (p *Postgres) Query(ctx context.Context, companyID, stmt string, readOnly bool) (QueryResult, error) {
	return p.query(ctx, companyID, stmt, readOnly, "")
}

// QueryOnce runs one writing statement for the call effectID (see
// CallsTable): a call that ran already answers its stored result and runs
// nothing.
func (p *Postgres) QueryOnce(ctx context.Context, companyID, stmt, effectID string) (QueryResult, error) {
	return p.query(ctx, companyID, stmt, false, effectID)
}

func (p *Postgres) query(ctx context.Context, companyID, stmt string, readOnly bool, effectID string) (QueryResult, error) {
	if err := validID(companyID); err != nil {
		return QueryResult{}, err
	}
	db, err := sql.Open("pgx", p.DSN(companyID))
	if err != nil {
		return QueryResult{}, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		if isCode(err, "28000") || isCode(err, "28P01") || isCode(err, "3D000") { // no role, no password, no database
			return QueryResult{}, ErrNoDatabase
		}
		return QueryResult{}, fmt.Errorf("companydb: connect: %w", err)
	}
	return run(ctx, db, stmt, readOnly, effectID, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", QueryTimeout.Milliseconds()))
		return err
	})
}

// beginner is a *sql.DB or a *sql.Conn.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// CallsTable is the table in a company's database where keyed writes
// (QueryOnce) keep their results: the row is inserted in the statement's
// own transaction, so a statement whose call was made again after a crash
// — its result lost on holdco's side — is found there, not run twice.
const CallsTable = "holdco_tool_calls"

func run(ctx context.Context, db beginner, stmt string, readOnly bool, effectID string, setup func(context.Context, *sql.Tx) error) (QueryResult, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: readOnly})
	if err != nil {
		return QueryResult{}, statementError(ctx, err)
	}
	defer tx.Rollback() //nolint:errcheck // a committed tx answers ErrTxDone
	if setup != nil {
		if err := setup(ctx, tx); err != nil {
			return QueryResult{}, err
		}
	}
	keyed := effectID != "" && !readOnly
	if keyed {
		done, found, err := storedCall(ctx, tx, effectID)
		if err != nil || found {
			return done, err
		}
	}
	out, err := statement(ctx, tx, stmt)
	if err != nil {
		return QueryResult{}, err
	}
	if keyed {
		raw, err := json.Marshal(out)
		if err != nil {
			return QueryResult{}, err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+CallsTable+" (id, result) VALUES ($1, $2)", effectID, string(raw)); err != nil {
			return QueryResult{}, statementError(ctx, err)
		}
	}
	if !readOnly {
		if err := tx.Commit(); err != nil {
			return QueryResult{}, statementError(ctx, err)
		}
	}
	return out, nil
}

// storedCall is the result the call effectID stored (found false: it has
// not run), creating CallsTable when the database has none yet.
func storedCall(ctx context.Context, tx *sql.Tx, effectID string) (QueryResult, bool, error) {
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+CallsTable+" (id VARCHAR(36) PRIMARY KEY, result TEXT NOT NULL)"); err != nil {
		return QueryResult{}, false, statementError(ctx, err)
	}
	var raw string
	err := tx.QueryRowContext(ctx, "SELECT result FROM "+CallsTable+" WHERE id = $1", effectID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return QueryResult{}, false, nil
	}
	if err != nil {
		return QueryResult{}, false, statementError(ctx, err)
	}
	var out QueryResult
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber() // integers stay exact
	if err := dec.Decode(&out); err != nil {
		return QueryResult{}, false, fmt.Errorf("companydb: stored result of %s: %w", effectID, err)
	}
	return out, true, nil
}

// statement runs the company's statement in tx.
func statement(ctx context.Context, tx *sql.Tx, stmt string) (QueryResult, error) {
	rows, err := tx.QueryContext(ctx, stmt)
	if err != nil {
		return QueryResult{}, statementError(ctx, err)
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return QueryResult{}, statementError(ctx, err)
	}
	out := QueryResult{Columns: cols, Rows: [][]any{}}
	for rows.Next() {
		if len(out.Rows) == QueryRows {
			out.Truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return QueryResult{}, statementError(ctx, err)
		}
		for i, v := range vals {
			vals[i] = jsonValue(v)
		}
		out.Rows = append(out.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return QueryResult{}, statementError(ctx, err)
	}
	rows.Close()
	if len(cols) == 0 {
		out.Columns = []string{}
	}
	return out, nil
}

// statementError makes the database's refusal the caller's error (the SQL
// is the company's), and a timeout a sentence.
func statementError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(err.Error(), "statement timeout") {
		return &ErrStatement{Msg: fmt.Sprintf("the statement ran longer than %s and was cancelled", QueryTimeout)}
	}
	return &ErrStatement{Msg: err.Error(), cause: err}
}

// jsonValue makes a scanned value JSON-friendly: text as strings, binary
// as base64, times in RFC 3339.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}
