package agenttools

import (
	"context"
	"strings"

	"holdco/models"
	"holdco/service"
)

// Database runs SQL on a company's own database (providers/companydb on
// the worker); nil: query_database answers not_configured.
type Database interface {
	// Query answers *SQLError when the statement is at fault (the
	// database's message), ErrNoDatabase when the company has none yet.
	// effectID ("" for none; only with readOnly false) names the call: its
	// result is stored in the company's database in the statement's own
	// transaction, and the same call made again answers it without
	// running the statement again.
	Query(ctx context.Context, companyID, sql string, readOnly bool, effectID string) (QueryResult, error)
}

// SQLError is the database refusing the company's statement.
type SQLError struct{ Msg string }

func (e *SQLError) Error() string { return e.Msg }

type QueryDatabaseInput struct {
	SQL  string `json:"sql" jsonschema:"one SQL statement on the company's own database (SQLite or PostgreSQL, as provisioned)" maxLength:"20000"`
	Mode string `json:"mode,omitempty" jsonschema:"read_only (default: writes are refused by the database) or read_write" enum:"read_only,read_write"`
}

type QueryResult struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated" jsonschema:"more rows than the 500 returned"`
}

func registerDatabase(c *Catalog, db Database, authorize func(ctx context.Context, companyID string) error) {
	Register(c, "query_database", "Run one SQL statement on the company's own database: read-only by default, at most 500 rows and 5 seconds.",
		func(ctx context.Context, companyID string, in QueryDatabaseInput) (QueryResult, error) {
			if db == nil {
				return QueryResult{}, notConfigured("The company database", "the worker role")
			}
			if err := authorize(ctx, companyID); err != nil {
				return QueryResult{}, err
			}
			stmt := strings.TrimRight(strings.TrimSpace(in.SQL), "; \t\n\r")
			if stmt == "" {
				return QueryResult{}, invalid("sql", "sql is empty.")
			}
			if strings.Contains(stmt, ";") {
				return QueryResult{}, invalid("sql", "Send one statement at a time (a ; inside a string literal counts too).")
			}
			readOnly, effectID := in.Mode != "read_write", ""
			if !readOnly && service.Keyed(ctx) {
				effectID = service.EffectID(ctx, "query")
			}
			res, err := db.Query(ctx, companyID, stmt, readOnly, effectID)
			if se, ok := err.(*SQLError); ok {
				return QueryResult{}, models.Errorf(models.CodeInvalidArgument, "The database refused the statement: %s", cutDetail(se.Msg)).WithField("sql")
			}
			return res, err
		})
}

func cutDetail(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}
