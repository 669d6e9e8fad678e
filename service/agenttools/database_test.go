package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/companydb"
	"holdco/service/agenttools"
	"holdco/service/companies"
	"holdco/service/usecases"
)

// sqliteTools is the worker's adapter (app/repository.go) in the tests.
type sqliteTools struct{ db *companydb.SQLite }

func (s sqliteTools) Query(ctx context.Context, companyID, stmt string, readOnly bool, effectID string) (agenttools.QueryResult, error) {
	return companyTools{s.db}.Query(ctx, companyID, stmt, readOnly, effectID)
}

func TestQueryDatabaseTool(t *testing.T) {
	dbs, err := companydb.NewSQLite(t.TempDir())
	require.NoError(t, err)
	w := newWorld(t, usecases.Options{Database: sqliteTools{dbs}})
	_, err = dbs.Ensure(context.Background(), w.company)
	require.NoError(t, err)

	w.call(t, "query_database", map[string]any{"sql": "CREATE TABLE orders (id INTEGER, total INTEGER);", "mode": "read_write"}, nil)
	w.call(t, "query_database", map[string]any{"sql": "INSERT INTO orders VALUES (1, 250)", "mode": "read_write"}, nil)
	var res agenttools.QueryResult
	w.call(t, "query_database", map[string]any{"sql": "SELECT id, total FROM orders"}, &res)
	assert.Equal(t, []string{"id", "total"}, res.Columns)
	require.Len(t, res.Rows, 1)
	assert.EqualValues(t, 250, res.Rows[0][1])

	_, err = w.cat.Call(w.agent, w.company, "query_database", json.RawMessage(`{"sql":"DELETE FROM orders"}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeInvalidArgument, de.Code, "read_only is the default")
	assert.Equal(t, "sql", de.Field)
	_, err = w.cat.Call(w.agent, w.company, "query_database", json.RawMessage(`{"sql":"SELECT 1; DROP TABLE orders","mode":"read_write"}`))
	assert.Contains(t, domainErr(t, err).Detail, "one statement")

	bob, bobCong := w.e.User(t, "bob@example.com")
	co, err := w.e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob DB"})
	require.NoError(t, err)
	_, err = w.cat.Call(w.agent, co.ID, "query_database", json.RawMessage(`{"sql":"SELECT 1"}`))
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)

	plain := newWorld(t, usecases.Options{})
	_, err = plain.cat.Call(plain.agent, plain.company, "query_database", json.RawMessage(`{"sql":"SELECT 1"}`))
	assert.Equal(t, agenttools.CodeNotConfigured, domainErr(t, err).Code)
}

// companyTools adapts either company database to query_database, as the
// worker does (app/repository.go).
type companyTools struct {
	db interface {
		Query(ctx context.Context, companyID, stmt string, readOnly bool) (companydb.QueryResult, error)
		QueryOnce(ctx context.Context, companyID, stmt, effectID string) (companydb.QueryResult, error)
	}
}

func (c companyTools) Query(ctx context.Context, companyID, stmt string, readOnly bool, effectID string) (agenttools.QueryResult, error) {
	var r companydb.QueryResult
	var err error
	if effectID != "" && !readOnly {
		r, err = c.db.QueryOnce(ctx, companyID, stmt, effectID)
	} else {
		r, err = c.db.Query(ctx, companyID, stmt, readOnly)
	}
	var se *companydb.ErrStatement
	if errors.As(err, &se) {
		return agenttools.QueryResult{}, &agenttools.SQLError{Msg: se.Msg}
	}
	return agenttools.QueryResult{Columns: r.Columns, Rows: r.Rows, Truncated: r.Truncated}, err
}

// query_database reaches only the company's own database, on both
// databases: ATTACH, the database list and the server's files are refused
// as invalid_argument on sql, and no answer names a file of the server's.
func TestQueryDatabaseToolStaysInTheCompanyDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sqlite, err := companydb.NewSQLite(dir)
	require.NoError(t, err)
	dbs := map[string]interface {
		Ensure(ctx context.Context, companyID string) (string, error)
		Drop(ctx context.Context, companyID string) error
		Query(ctx context.Context, companyID, stmt string, readOnly bool) (companydb.QueryResult, error)
		QueryOnce(ctx context.Context, companyID, stmt, effectID string) (companydb.QueryResult, error)
	}{"sqlite": sqlite}
	if dsn := os.Getenv("TEST_DATABASE_URL"); dsn != "" {
		pg, err := companydb.NewPostgres(dsn, []byte("test secret"), nil)
		require.NoError(t, err)
		t.Cleanup(func() { pg.Close() })
		dbs["postgres"] = pg
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, usecases.Options{Database: companyTools{db}})
			t.Cleanup(func() { _ = db.Drop(ctx, w.company) })
			_, err := db.Ensure(ctx, w.company)
			require.NoError(t, err)
			outside := filepath.Join(t.TempDir(), "taken")
			for _, mode := range []string{"read_only", "read_write"} {
				for _, stmt := range []string{
					"ATTACH DATABASE '" + outside + "' AS x",
					"SELECT * FROM pragma_database_list",
					"SELECT pg_read_file('/etc/hostname')",
					"COPY (SELECT 1) TO PROGRAM 'touch " + outside + "'",
				} {
					raw, err := json.Marshal(map[string]string{"sql": stmt, "mode": mode})
					require.NoError(t, err)
					_, err = w.cat.Call(w.agent, w.company, "query_database", raw)
					de := domainErr(t, err)
					assert.Equal(t, models.CodeInvalidArgument, de.Code, stmt)
					assert.Equal(t, "sql", de.Field, stmt)
					assert.NotContains(t, de.Detail, dir, stmt)
					assert.NoFileExists(t, outside, stmt)
				}
			}
		})
	}
}
