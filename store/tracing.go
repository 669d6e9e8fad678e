package store

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// WithTracerProvider makes a client span of tp for every statement the
// store runs under a context that carries a span (a request's, an
// activity's): `db.<kind> <table>`, kind being GORM's statement kind
// (create, query, update, delete, row, raw). Statements outside any trace
// (migrations, sweeps that poll) make none. A span carries the OTel
// database attributes — system, operation, table, rows, the error code of
// a failure — and never the statement's text or a bound value. Without
// this option (nil tp) no callback is registered at all.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp }
}

// tracerName is the instrumentation scope of the store's spans.
const tracerName = "holdco/store"

// Attribute keys of the OTel database semantic conventions (v1.40), and
// the rows a write changed, which they do not name (GORM plugins use
// db.rows_affected).
const (
	attrDBSystem       = attribute.Key("db.system") // before v1.30; many backends still key on it
	attrDBSystemName   = attribute.Key("db.system.name")
	attrDBOperation    = attribute.Key("db.operation.name")
	attrDBCollection   = attribute.Key("db.collection.name")
	attrDBReturnedRows = attribute.Key("db.response.returned_rows")
	attrDBStatusCode   = attribute.Key("db.response.status_code")
	attrDBRowsAffected = attribute.Key("db.rows_affected")
	attrErrorType      = attribute.Key("error.type")
)

// statementSpan is a span in flight, kept in the statement's settings
// between the callbacks before and after GORM's own; stmt tells it from a
// copy a nested statement inherited with the settings.
type statementSpan struct {
	stmt *gorm.Statement
	span trace.Span
	// raw: the caller wrote the SQL (Raw, Exec), so the table is read
	// from the text rather than from the model it scans into.
	raw bool
}

type spanKey struct{}

// traceStatements registers the span callbacks on db: first and last of
// each statement kind, so a span covers the write gate's and the pool's
// wait too.
func traceStatements(db *gorm.DB, tp trace.TracerProvider, dialect string) error {
	tracer := tp.Tracer(tracerName)
	sys := systemAttrs(dialect)
	cb := db.Callback()
	const first, last = "holdco:span_start", "holdco:span_end"
	for _, err := range []error{
		cb.Create().Before("*").Register(first, startSpan(tracer, "create")),
		cb.Create().After("*").Register(last, endSpan("create", sys)),
		cb.Query().Before("*").Register(first, startSpan(tracer, "query")),
		cb.Query().After("*").Register(last, endSpan("query", sys)),
		cb.Update().Before("*").Register(first, startSpan(tracer, "update")),
		cb.Update().After("*").Register(last, endSpan("update", sys)),
		cb.Delete().Before("*").Register(first, startSpan(tracer, "delete")),
		cb.Delete().After("*").Register(last, endSpan("delete", sys)),
		cb.Row().Before("*").Register(first, startSpan(tracer, "row")),
		cb.Row().After("*").Register(last, endSpan("row", sys)),
		cb.Raw().Before("*").Register(first, startSpan(tracer, "raw")),
		cb.Raw().After("*").Register(last, endSpan("raw", sys)),
	} {
		if err != nil {
			return fmt.Errorf("store: tracing: %w", err)
		}
	}
	return nil
}

// systemAttrs are the spans' database system attributes for dialect.
func systemAttrs(dialect string) [2]attribute.KeyValue {
	system := "sqlite"
	if dialect == DialectPostgres {
		system = "postgresql"
	}
	return [2]attribute.KeyValue{attrDBSystemName.String(system), attrDBSystem.String(system)}
}

// startSpan starts the statement's span as a child of the span in its
// context; a context without one starts nothing. Its attributes are set
// when it ends, all at once (one copy into the span).
func startSpan(tracer trace.Tracer, kind string) func(*gorm.DB) {
	name := "db." + kind
	client := trace.WithSpanKind(trace.SpanKindClient)
	return func(db *gorm.DB) {
		ctx := db.Statement.Context
		if ctx == nil || !trace.SpanContextFromContext(ctx).IsValid() {
			return
		}
		_, span := tracer.Start(ctx, name, client)
		db.Statement.Settings.Store(spanKey{}, statementSpan{stmt: db.Statement, span: span, raw: db.Statement.SQL.Len() > 0})
	}
}

// endSpan names the span after the table, adds what the statement did and
// ends it. The SQL text is read for its first keyword and, for SQL the
// caller wrote, its first table, both identifiers: never a value.
func endSpan(kind string, system [2]attribute.KeyValue) func(*gorm.DB) {
	return func(db *gorm.DB) {
		if ctx := db.Statement.Context; ctx == nil || !trace.SpanContextFromContext(ctx).IsValid() {
			return // started none
		}
		v, ok := db.Statement.Settings.LoadAndDelete(spanKey{})
		if !ok {
			return
		}
		s, ok := v.(statementSpan)
		if !ok || s.stmt != db.Statement {
			return
		}
		span := s.span
		if !span.IsRecording() {
			span.End()
			return
		}
		sql := db.Statement.SQL.String()
		table := db.Statement.Table
		switch {
		case s.raw:
			table = firstTable(sql)
		case db.Statement.TableExpr != nil:
			// Table("conglomerates AS g") sets Table to the alias.
			table = leadingTable(db.Statement.TableExpr.SQL)
		}
		if table == "" {
			table = firstTable(sql)
		}
		finishSpan(span, kind, table, sql, db.RowsAffected, db.Error, system)
	}
}

// finishSpan names a recording span after the table, adds what the
// statement did (rows: returned or changed, by kind) and ends it.
func finishSpan(span trace.Span, kind, table, sql string, rows int64, err error, system [2]attribute.KeyValue) {
	attrs := append(make([]attribute.KeyValue, 0, len(system)+5), system[:]...)
	if table != "" {
		span.SetName("db." + kind + " " + table)
		attrs = append(attrs, attrDBCollection.String(table))
	}
	if op := firstKeyword(sql); op != "" {
		attrs = append(attrs, attrDBOperation.String(op))
	}
	switch {
	case err == nil || errors.Is(err, gorm.ErrRecordNotFound):
		// A row that is not there is an answer, not a failure.
		switch kind {
		case "query":
			attrs = append(attrs, attrDBReturnedRows.Int64(rows))
		case "create", "update", "delete", "raw":
			attrs = append(attrs, attrDBRowsAffected.Int64(rows))
		}
	default:
		code := errorCode(err)
		attrs = append(attrs, attrErrorType.String(code))
		if code != "_OTHER" {
			attrs = append(attrs, attrDBStatusCode.String(code))
		}
		// The same text the log gets: no value of the statement.
		span.SetStatus(codes.Error, safeErrorText(err))
	}
	span.SetAttributes(attrs...)
	span.End()
}

// errorCode is a failure's database code: SQLSTATE on Postgres, the
// (extended) result code on SQLite, or _OTHER (a cancelled context, a
// closed pool).
func errorCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	if code, ok := sqliteCode(err); ok {
		return strconv.Itoa(code)
	}
	return "_OTHER"
}

// firstKeyword is the statement's first word in upper case (SELECT,
// INSERT, WITH…), or "" when it does not start with a word.
func firstKeyword(sql string) string {
	sql = strings.TrimLeft(sql, " \t\r\n")
	end := 0
	for end < len(sql) && end < 16 && isLetter(sql[end]) {
		end++
	}
	if end == 0 || (end < len(sql) && !isSpace(sql[end]) && sql[end] != '(') {
		return ""
	}
	return strings.ToUpper(sql[:end])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// ident is a table name, quoted or not, schema-qualified or not.
const ident = "[\"`]?([a-z_][a-z0-9_]*(?:[\"`]?\\.[\"`]?[a-z_][a-z0-9_]*)?)[\"`]?(?:\\s|$|[,;)])"

// tableInSQL finds the first table a statement names after FROM, INTO,
// UPDATE or JOIN (a function call or a subquery is not one); leadingIdent
// the table an expression starts with.
var (
	tableInSQL   = regexp.MustCompile("(?i)\\b(?:from|into|update|join)\\s+" + ident)
	leadingIdent = regexp.MustCompile("(?i)^\\s*" + ident)
	unquote      = strings.NewReplacer(`"`, "", "`", "")
)

// firstTable is the first table of sql, or "".
func firstTable(sql string) string {
	if m := tableInSQL.FindStringSubmatch(sql); m != nil {
		return unquote.Replace(m[1])
	}
	return ""
}

// leadingTable is the table a table expression starts with, or "".
func leadingTable(expr string) string {
	if m := leadingIdent.FindStringSubmatch(expr); m != nil {
		return unquote.Replace(m[1])
	}
	return ""
}
