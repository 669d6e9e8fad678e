package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
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

func (s sqliteTools) Query(ctx context.Context, companyID, stmt string, readOnly bool) (agenttools.QueryResult, error) {
	r, err := s.db.Query(ctx, companyID, stmt, readOnly)
	var se *companydb.ErrStatement
	if errors.As(err, &se) {
		return agenttools.QueryResult{}, &agenttools.SQLError{Msg: se.Msg}
	}
	return agenttools.QueryResult{Columns: r.Columns, Rows: r.Rows, Truncated: r.Truncated}, err
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
