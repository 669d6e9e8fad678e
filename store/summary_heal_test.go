package store_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// A summary that drifted from its rows is made again from them by
// RebuildCompanySummaries (`holdco migrate --rebuild-summaries`), and the
// triggers keep it after.
func TestRebuildCompanySummariesSumsTheRowsAgain(t *testing.T) {
	s := testenv.NewStore(t)
	_, cong := signUp(t, s, "ada-rebuild")
	w := newSummaryWriter(t, s, cong, "Rebuilt Co")
	w.email(true)
	w.file("a.txt", 100)
	w.turn("")
	require.NoError(t, store.GormDB(s).Exec("UPDATE company_summaries SET file_count = 99, emails_total = 7, turn_id = NULL").Error)
	sum, err := s.Companies().CompanySummary(context.Background(), w.sc, time.Now().UTC().Truncate(24*time.Hour), store.HeadlineDays{})
	require.NoError(t, err)
	require.Equal(t, int64(99), sum.FileCount, "the summary drifted")

	require.NoError(t, s.RebuildCompanySummaries(context.Background()))
	assertSummaryIsTheReads(t, s, w.sc, "after the rebuild")
	w.email(false)
	w.file("b.txt", 5)
	assertSummaryIsTheReads(t, s, w.sc, "written after the rebuild")
}

// A Postgres database moved to another schema (renamed, or restored under
// another name) kept trigger functions naming the old schema, and every
// write of a summarised table failed at its commit. Migrate, run on every
// start, finds that and makes the summaries again; on a schema whose
// triggers are current it leaves them alone.
func TestMigrateMakesTheSummariesAgainAfterASchemaMove(t *testing.T) {
	base := os.Getenv(testenv.DatabaseURLEnv)
	if base == "" {
		t.Skip(testenv.DatabaseURLEnv + " is not set: the schema move is Postgres's")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	suffix := uuid.NewString()[:8]
	from, to := "move_from_"+suffix, "move_to_"+suffix
	_, err = admin.ExecContext(ctx, `CREATE SCHEMA "`+from+`"`)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, schema := range []string{from, to} {
			_, err := admin.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
			assert.NoError(t, err)
		}
	})
	open := func(schema string) *store.Store {
		u, err := url.Parse(base)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		s, err := store.Open(ctx, u.String(), slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	tableOID := func(s *store.Store) int64 {
		var oid int64
		require.NoError(t, store.GormDB(s).Raw("SELECT 'company_summaries'::regclass::oid").Scan(&oid).Error)
		return oid
	}

	before := open(from)
	require.NoError(t, before.Migrate(ctx))
	_, cong := signUp(t, before, "ada-moved")
	w := newSummaryWriter(t, before, cong, "Moved Co")
	w.email(true)
	w.file("a.txt", 100)
	oid := tableOID(before)
	require.NoError(t, before.Migrate(ctx))
	assert.Equal(t, oid, tableOID(before), "current triggers: the summaries are left alone")
	require.NoError(t, before.Close())

	_, err = admin.ExecContext(ctx, `ALTER SCHEMA "`+from+`" RENAME TO "`+to+`"`)
	require.NoError(t, err)
	after := open(to)
	_, _, err = after.Sales().DeliverInboundEmail(ctx, w.co.Handle, models.Email{ID: uuid.NewString(), ProviderMessageID: uuid.NewString(),
		FromAddress: "a@example.com", ToAddress: "co@example.com", Subject: "hi", BodyState: models.EmailBodyPresent}, w.ev)
	require.Error(t, err, "the moved schema's triggers still name the old one")

	require.NoError(t, after.Migrate(ctx))
	moved := summaryWriter{t: t, s: after, sc: systemScope(t, after, w.co.ID), co: w.co, ctx: ctx, ev: w.ev}
	assertSummaryIsTheReads(t, after, moved.sc, "after the move and Migrate")
	moved.email(false)
	moved.file("b.txt", 5)
	moved.turn("")
	assertSummaryIsTheReads(t, after, moved.sc, "written after the move")
	oid = tableOID(after)
	require.NoError(t, after.Migrate(ctx))
	assert.Equal(t, oid, tableOID(after), "made again once, not on every start")
}
