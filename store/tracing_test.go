package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// TestStatementSpans: with a tracer provider, every statement run under a
// caller's span is one client span, its child, named after the statement's
// kind and table, with the database attributes and none of the values
// bound to it; a failing statement has error status (its text carries no
// value either), a missing row does not. Statements outside a trace make
// no span, and a store opened without the option has no callbacks.
func TestStatementSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := testenv.NewStoreWith(t, slog.New(slog.DiscardHandler), store.WithTracerProvider(tp))
	require.Empty(t, rec.Ended(), "migrating, outside any trace, makes no span")
	system := "sqlite"
	if s.Dialect() == store.DialectPostgres {
		system = "postgresql"
	}

	const secret = "SeCrEt-Value-7f3a9c"
	ctx, statements := store.WithQueryCount(context.Background())
	ctx, caller := tp.Tracer("test").Start(ctx, "caller")
	db := store.GormDB(s).WithContext(ctx)

	// create (in a transaction), query, update, delete, row, raw.
	iss, sub := "https://idp.example", uuid.NewString()
	u, _, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{
		Email: secret + "@example.com", NormalizedEmail: secret + "@example.com", Name: secret, Issuer: &iss, Subject: &sub,
	}, secret+"'s conglomerate")
	require.NoError(t, err)
	_, err = s.Identity().GetWebSession(ctx, secret)
	require.ErrorIs(t, err, models.ErrNotFound)
	require.NoError(t, s.Identity().RevokeWebSessionsOfUser(ctx, u.ID, time.Now()))
	require.NoError(t, db.Where("name = ?", secret).Delete(&models.InstanceSecret{}).Error)
	var echoed string
	require.NoError(t, db.Raw("SELECT CAST(? AS TEXT) AS v", secret).Scan(&echoed).Error)
	require.Equal(t, secret, echoed)
	failed := db.Exec("INSERT INTO no_such_table (v) VALUES (?)", secret).Error
	require.Error(t, failed)
	if s.Dialect() == store.DialectPostgres {
		// Postgres quotes the value it could not convert in its message.
		err = db.Exec("SELECT CAST(CAST(? AS TEXT) AS integer)", secret).Error
		require.ErrorContains(t, err, secret, "the driver error itself carries the value")
	}
	caller.End()

	var spans []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.InstrumentationScope().Name == "holdco/store" {
			spans = append(spans, sp)
		}
	}
	require.EqualValues(t, statements.Load(), len(spans), "one span per statement")
	byName := map[string]sdktrace.ReadOnlySpan{}
	var names []string
	for _, sp := range spans {
		byName[sp.Name()] = sp
		names = append(names, sp.Name())
		assert.Equal(t, trace.SpanKindClient, sp.SpanKind(), sp.Name())
		assert.Equal(t, caller.SpanContext().SpanID(), sp.Parent().SpanID(), "%s is the caller's child", sp.Name())
		assert.Equal(t, caller.SpanContext().TraceID(), sp.SpanContext().TraceID())
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range sp.Attributes() {
			attrs[kv.Key] = kv.Value
			assert.NotContains(t, kv.Value.String(), secret, "%s: attribute %s", sp.Name(), kv.Key)
			assert.NotContains(t, kv.Value.String(), "?", "%s: attribute %s holds no statement text", sp.Name(), kv.Key)
		}
		assert.Equal(t, system, attrs["db.system.name"].AsString(), sp.Name())
		assert.Equal(t, system, attrs["db.system"].AsString(), sp.Name())
		assert.NotContains(t, attrs, attribute.Key("db.query.text"))
		assert.NotContains(t, attrs, attribute.Key("db.statement"))
		assert.NotContains(t, sp.Status().Description, secret, sp.Name())
		assert.Empty(t, sp.Events(), "no recorded error event carries a driver message")
		if op, ok := attrs["db.operation.name"]; ok {
			kind, _, _ := strings.Cut(strings.TrimPrefix(sp.Name(), "db."), " ")
			assert.Contains(t, map[string][]string{
				"create": {"INSERT"}, "query": {"SELECT"}, "update": {"UPDATE"}, "delete": {"DELETE"},
				"row": {"SELECT", "WITH"}, "raw": {"INSERT", "SELECT", "UPDATE", "DELETE", "WITH"},
			}[kind], op.AsString(), sp.Name())
		} else {
			t.Errorf("%s has no db.operation.name", sp.Name())
		}
	}
	t.Logf("spans: %s", strings.Join(names, ", "))

	for _, name := range []string{"db.create users", "db.create conglomerates", "db.query web_sessions", "db.update web_sessions",
		"db.delete instance_secrets", "db.row", "db.raw no_such_table"} {
		require.Contains(t, byName, name)
	}
	attr := func(sp sdktrace.ReadOnlySpan, k string) attribute.Value {
		for _, kv := range sp.Attributes() {
			if string(kv.Key) == k {
				return kv.Value
			}
		}
		return attribute.Value{}
	}
	assert.Equal(t, "users", attr(byName["db.create users"], "db.collection.name").AsString())
	assert.Equal(t, "INSERT", attr(byName["db.create users"], "db.operation.name").AsString())
	assert.EqualValues(t, 1, attr(byName["db.create users"], "db.rows_affected").AsInt64())
	assert.EqualValues(t, 0, attr(byName["db.update web_sessions"], "db.rows_affected").AsInt64())

	missing := byName["db.query web_sessions"]
	assert.Equal(t, codes.Unset, missing.Status().Code, "a missing row is an answer")
	assert.EqualValues(t, 0, attr(missing, "db.response.returned_rows").AsInt64())

	bad := byName["db.raw no_such_table"]
	assert.Equal(t, codes.Error, bad.Status().Code)
	assert.Contains(t, bad.Status().Description, "no_such_table")
	assert.Equal(t, "no_such_table", attr(bad, "db.collection.name").AsString())
	code := "1" // SQLITE_ERROR
	if system == "postgresql" {
		code = "42P01" // undefined_table
	}
	assert.Equal(t, code, attr(bad, "db.response.status_code").AsString())
	assert.Equal(t, code, attr(bad, "error.type").AsString())
	if system == "postgresql" {
		cast := 0
		for _, sp := range spans {
			if sp.Status().Code == codes.Error && attr(sp, "db.response.status_code").AsString() == "22P02" {
				cast++
				assert.Contains(t, sp.Status().Description, "invalid input syntax")
			}
		}
		assert.Equal(t, 1, cast, "the failed cast's span")
	}

	// Outside a trace: no span.
	before := len(rec.Ended())
	_, err = s.Identity().GetWebSession(context.Background(), "none")
	require.True(t, errors.Is(err, models.ErrNotFound))
	assert.Len(t, rec.Ended(), before)

	// Off: no callback at all.
	plain := testenv.NewStore(t)
	assert.Nil(t, store.GormDB(plain).Callback().Query().Get("holdco:span_start"))
	assert.NotNil(t, store.GormDB(s).Callback().Query().Get("holdco:span_start"))
}

// The dashboard's statements (one round trip on Postgres, outside GORM's
// callbacks) are counted and traced as every other statement: one span
// each, a child of the caller's, named after its first table.
func TestDashboardStatementSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := testenv.NewStoreWith(t, slog.New(slog.DiscardHandler), store.WithTracerProvider(tp))
	u, cong := signUp(t, s, "spans")
	c, err := s.Companies().CreateCompany(context.Background(), s.SystemConglomerateScope(cong.ID), models.Company{Name: "S", Handle: handle("s")})
	require.NoError(t, err)

	ctx, statements := store.WithQueryCount(context.Background())
	ctx, caller := tp.Tracer("test").Start(ctx, "caller")
	_, _, _, _, err = s.Companies().AuthorizeCompanyDashboard(ctx, store.Actor{UserID: u.ID, MemberOf: cong.ID}, c.ID, time.Now().UTC(), store.HeadlineDays{}, 10, 20, 20)
	require.NoError(t, err)
	caller.End()

	var names []string
	for _, sp := range rec.Ended() {
		if sp.InstrumentationScope().Name != "holdco/store" || sp.Parent().SpanID() != caller.SpanContext().SpanID() {
			continue
		}
		names = append(names, sp.Name())
		assert.Equal(t, trace.SpanKindClient, sp.SpanKind(), sp.Name())
	}
	assert.EqualValues(t, 2, statements.Load(), "the summary with the company, the lists")
	assert.ElementsMatch(t, []string{"db.row companies", "db.row activity_events"}, names)
}
