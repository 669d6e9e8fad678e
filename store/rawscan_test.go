package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func postgresStore(t *testing.T) *store.Store {
	t.Helper()
	s := testenv.NewStore(t)
	if s.Dialect() != store.DialectPostgres {
		t.Skip("pgx's raw values: Postgres only (TEST_DATABASE_URL)")
	}
	return s
}

// A pipelined row decoded from pgx's raw values holds what pgx's own
// rows.Scan puts in the same destinations, for every column type and
// destination the decoder takes, NULLs and edge values included.
func TestRawScanIsPgxsScan(t *testing.T) {
	s := postgresStore(t)
	q := `SELECT 'plain'::text, 'vär'::varchar, 'ab'::char(4), 'active'::varchar(16), NULL::text, 'x'::text,
		'y'::text, NULL::varchar, 9007199254740993::int8, -7::int4, 3::int2, NULL::int8, (-9223372036854775807 - 1)::int8,
		true, false, '2026-12-06 10:11:12.345678+00'::timestamptz, '1999-12-31 23:59:59.999999+00'::timestamptz,
		'1970-01-01 00:00:00+00'::timestamptz, NULL::timestamptz, '2026-01-01 00:00:00.5+05'::timestamptz, NULL::timestamptz,
		'1901-02-03 04:05:06.000007+00'::timestamptz`
	dest := func() []any {
		var (
			s1, s2, s3    string
			status        models.CompanyStatus
			e1, e2        string
			t1, t2        pgtype.Text
			i1            int64
			i2            int
			n1, n2, n3    pgtype.Int8
			b1, b2        bool
			at1, at2, at3 time.Time
			p1, p2        *time.Time
		)
		any1, any2 := store.NewAnyTime(), store.NewAnyTime()
		return []any{&s1, &s2, &s3, &status, store.EmptyIfNull(&e1), store.EmptyIfNull(&e2), &t1, &t2, &i1, &i2, &n1, &n2, &n3,
			&b1, &b2, &at1, &at2, &p1, &p2, any1, any2, &at3}
	}
	rows, err := store.ScanBothWays(context.Background(), s, q, nil, dest)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	r := rows[0]
	require.True(t, r.Decoded, "every column is one the decoder takes")
	require.NoError(t, r.RawErr)
	require.NoError(t, r.ScanErr)
	for i := range r.Raw {
		assert.Equal(t, r.Scanned[i], r.Raw[i], "column %d", i)
	}
	// And what that is, to be sure both did not miss alike.
	assert.Equal(t, "ab  ", *r.Raw[2].(*string))
	assert.Equal(t, models.CompanyStatus("active"), *r.Raw[3].(*models.CompanyStatus))
	assert.Equal(t, int64(9007199254740993), *r.Raw[8].(*int64))
	assert.Equal(t, pgtype.Int8{Int64: -1 << 63, Valid: true}, *r.Raw[12].(*pgtype.Int8))
	assert.True(t, time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC).Equal(*r.Raw[16].(*time.Time)))
	assert.Nil(t, *r.Raw[18].(**time.Time))
}

// A column or destination the decoder does not take is left to
// rows.Scan (scanRow falls back), and a value neither can hold is an
// error both ways.
func TestRawScanLeavesTheRestToPgx(t *testing.T) {
	s := postgresStore(t)
	ctx := context.Background()
	one := func(q string, dest func() []any) store.RawScanRow {
		t.Helper()
		rows, err := store.ScanBothWays(ctx, s, q, nil, dest)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		return rows[0]
	}
	str := func() []any { var v string; return []any{&v} }
	text := func() []any { var v pgtype.Text; return []any{&v} }
	tm := func() []any { var v time.Time; return []any{&v} }
	anyT := func() []any { return []any{store.NewAnyTime()} }

	for name, r := range map[string]store.RawScanRow{
		"jsonb into a string":         one(`SELECT '{"a": 1}'::jsonb`, str),
		"an integer into pgtype.Text": one(`SELECT 5::int8`, text),
		"numeric into a string":       one(`SELECT 1.5::numeric`, str),
		"a date into a time":          one(`SELECT '2026-01-02'::date`, tm),
	} {
		assert.False(t, r.Decoded, name)
	}
	for name, r := range map[string]store.RawScanRow{
		"NULL into a string":     one(`SELECT NULL::text`, str),
		"infinity into a time":   one(`SELECT 'infinity'::timestamptz`, tm),
		"-infinity into anyTime": one(`SELECT '-infinity'::timestamptz`, anyT),
		"NULL into an int64":     one(`SELECT NULL::int8`, func() []any { var v int64; return []any{&v} }),
		"NULL into a bool":       one(`SELECT NULL::bool`, func() []any { var v bool; return []any{&v} }),
	} {
		assert.True(t, r.Decoded, name)
		assert.Error(t, r.RawErr, name)
		assert.Error(t, r.ScanErr, name)
	}
}

// The dashboard's two statements are decoded from the raw values, row by
// row, as pgx's rows.Scan reads them, for a company with something in
// every section.
func TestDashboardStatementsAreDecodedRaw(t *testing.T) {
	s := postgresStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "raw")
	c, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: "Raw", Handle: handle("raw")})
	require.NoError(t, err)
	sc := systemScope(t, s, c.ID)
	at := time.Now().UTC().Truncate(time.Microsecond)
	require.NoError(t, s.Companies().SaveResource(ctx, sc, models.CompanyResource{CompanyID: c.ID, Kind: models.ResourceHosting,
		Status: models.ResourceFailed, Ref: "/srv/sites/raw", LastError: "boom", Attempts: 3, UpdatedAt: at}))
	_, err = s.Companies().ReachMilestone(ctx, sc, models.MilestoneFirstDollar, at)
	require.NoError(t, err)
	turn, err := s.Turns().CreateTurn(ctx, sc, models.Turn{ConglomerateID: cong.ID, SessionID: uuid.NewString(), Trigger: models.TriggerMessage,
		Status: models.TurnQueued, Message: "hello", Attachments: []string{}}, nil)
	require.NoError(t, err)
	cost := int64(7)
	_, _, err = s.Turns().FinishTurn(ctx, sc, turn.ID, "text", models.TurnResult{Status: models.TurnWaiting, Answer: "answer",
		Question: "Which colour?", CreditsCost: &cost, EndedAt: at}, models.ActivityInput{Kind: models.ActivityDocumentUpdated,
		Actor: models.ActorSystem, Summary: "turn ended"})
	require.NoError(t, err)
	due := at.Add(48 * time.Hour)
	_, err = s.Companies().CreateTask(ctx, sc, models.Task{Title: "Ship", Description: "it", Status: models.TaskPending,
		Priority: models.TaskPriorityHigh, CreatedBy: models.ActorUser, DueAt: &due},
		models.ActivityInput{Kind: models.ActivityTaskCreated, Actor: models.ActorUser, Summary: "Task created", Data: map[string]any{"n": 12}})
	require.NoError(t, err)
	_, _, err = s.Companies().PutDocument(ctx, sc, models.Document{DocumentType: models.DocMission, Title: "Mission", Content: "Make tea.",
		Visibility: models.DocumentVisible, UpdatedBy: models.ActorUser}, models.ActivityInput{Kind: models.ActivityDocumentUpdated,
		Actor: models.ActorUser, Summary: "Mission updated"})
	require.NoError(t, err)

	day := at.Format(time.DateOnly)
	qs, args, dests := store.DashboardStatements(s.Dialect(), c.ID, store.HeadlineDays{From: day, PrevFrom: day, To: day})
	for i, q := range qs {
		rows, err := store.ScanBothWays(ctx, s, q, args[i], dests[i])
		require.NoError(t, err)
		require.NotEmpty(t, rows, "statement %d", i)
		for j, r := range rows {
			require.True(t, r.Decoded, "statement %d, row %d: every column is decoded raw", i, j)
			require.NoError(t, r.RawErr)
			require.NoError(t, r.ScanErr)
			assert.Equal(t, r.Scanned, r.Raw, "statement %d, row %d", i, j)
		}
	}
}
