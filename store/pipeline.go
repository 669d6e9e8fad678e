package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/trace"
)

// pipelined is one statement of a pipeline: its text, its arguments and
// what reads its rows.
type pipelined struct {
	q    fixedSQL
	args []any
	read func(rowSource) error
}

// pipeline runs Postgres statements on one pooled connection in one round
// trip (a pgx batch: every statement sent, then every answer read), each
// answer read by its statement's read in turn. The statements do not go
// through GORM, so each is given here what GORM's callbacks give every
// other statement: the SQL log's Trace (the statement count of
// WithQueryCount, the slow-statement and failure lines) and a span. The
// first error is returned; every answer is read whatever it is.
func pipeline(ctx context.Context, s *Store, stmts ...pipelined) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		var b pgx.Batch
		spans := make([]trace.Span, len(stmts))
		for i, st := range stmts {
			b.Queue(st.q.postgres, st.args...)
			spans[i] = startPipelineSpan(ctx, s)
		}
		begin := time.Now()
		results := c.Conn().SendBatch(ctx, &b)
		var first error
		for i, st := range stmts {
			rows, err := results.Query()
			var n int64
			if err == nil {
				counted := &countedRows{Rows: rows}
				err = st.read(counted)
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
				n = counted.n
			}
			endPipelineSpan(s, spans[i], st.q.postgres, n, err)
			s.db.Logger.Trace(ctx, begin, func() (string, int64) { return st.q.postgres, n }, err)
			if err != nil && first == nil {
				first = err
			}
		}
		if err := results.Close(); err != nil && first == nil {
			first = err
		}
		return first
	})
}

// countedRows counts the rows read.
type countedRows struct {
	pgx.Rows
	n int64
}

func (r *countedRows) Next() bool {
	if r.Rows.Next() {
		r.n++
		return true
	}
	return false
}

// startPipelineSpan starts a pipelined statement's span as GORM's row
// callbacks do (a child of ctx's span; none outside a trace or without a
// tracer).
func startPipelineSpan(ctx context.Context, s *Store) trace.Span {
	if s.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	_, span := s.tracer.Start(ctx, "db.row", trace.WithSpanKind(trace.SpanKindClient))
	return span
}

// endPipelineSpan ends a span of startPipelineSpan as the row callbacks
// do: named after the statement's first table, with its rows or its
// failure.
func endPipelineSpan(s *Store, span trace.Span, sql string, rows int64, err error) {
	if span == nil {
		return
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	finishSpan(span, "row", firstTable(sql), sql, rows, err, systemAttrs(s.dialect))
}
