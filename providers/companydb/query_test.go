package companydb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/companydb"
)

type querier interface {
	adapter
	Query(ctx context.Context, companyID, stmt string, readOnly bool) (companydb.QueryResult, error)
}

func TestQueryReadOnlyReadWriteAndLimits(t *testing.T) {
	ctx := context.Background()
	for name, a := range adapters(t) {
		q := a.(querier)
		t.Run(name, func(t *testing.T) {
			id, other := uuid.NewString(), uuid.NewString()
			t.Cleanup(func() { _ = a.Drop(ctx, id); _ = a.Drop(ctx, other) })
			_, err := q.Query(ctx, id, "SELECT 1", true)
			require.ErrorIs(t, err, companydb.ErrNoDatabase, "not provisioned")
			for _, c := range []string{id, other} {
				_, err := a.Ensure(ctx, c)
				require.NoError(t, err)
			}

			_, err = q.Query(ctx, id, "CREATE TABLE leads (name TEXT, score INTEGER)", false)
			require.NoError(t, err)
			_, err = q.Query(ctx, id, "INSERT INTO leads (name, score) VALUES ('Jane', 3), ('Ben', 5)", false)
			require.NoError(t, err)
			r, err := q.Query(ctx, id, "SELECT name, score FROM leads ORDER BY score", true)
			require.NoError(t, err)
			assert.Equal(t, []string{"name", "score"}, r.Columns)
			require.Len(t, r.Rows, 2)
			assert.Equal(t, "Jane", r.Rows[0][0])
			assert.EqualValues(t, 3, r.Rows[0][1])

			// Read-only is the database's rule, not a keyword check.
			_, err = q.Query(ctx, id, "INSERT INTO leads (name, score) VALUES ('Eve', 1)", true)
			var se *companydb.ErrStatement
			require.ErrorAs(t, err, &se)
			r, err = q.Query(ctx, id, "SELECT COUNT(*) FROM leads", true)
			require.NoError(t, err)
			assert.EqualValues(t, 2, r.Rows[0][0], "nothing written")

			_, err = q.Query(ctx, id, "SELEC nonsense", true)
			require.ErrorAs(t, err, &se)

			// Rows are cut at QueryRows.
			r, err = q.Query(ctx, id, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000) SELECT i FROM n", true)
			require.NoError(t, err)
			assert.Len(t, r.Rows, companydb.QueryRows)
			assert.True(t, r.Truncated)

			// The other company's database does not have this table.
			_, err = q.Query(ctx, other, "SELECT * FROM leads", true)
			require.ErrorAs(t, err, &se)

			// A slow statement (an endless recursion) is cut at QueryTimeout:
			// that it returns at all, with the timeout's message, is the check.
			_, err = q.Query(ctx, id, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT COUNT(*) FROM n", true)
			require.ErrorAs(t, err, &se)
			assert.Contains(t, se.Msg, "longer than")
		})
	}
}

// A keyed write stores its result with its effect, in the statement's own
// transaction: run again for the same call (its first answer lost in a
// crash), it answers the stored result and changes nothing; a statement
// that fails stores nothing, so the call can be made again.
func TestQueryOnceWritesOncePerCall(t *testing.T) {
	ctx := context.Background()
	for name, a := range adapters(t) {
		q := a.(interface {
			querier
			QueryOnce(ctx context.Context, companyID, stmt, effectID string) (companydb.QueryResult, error)
		})
		t.Run(name, func(t *testing.T) {
			id := uuid.NewString()
			t.Cleanup(func() { _ = a.Drop(ctx, id) })
			_, err := a.Ensure(ctx, id)
			require.NoError(t, err)
			_, err = q.Query(ctx, id, "CREATE TABLE orders (id INTEGER, total BIGINT)", false)
			require.NoError(t, err)

			call := uuid.NewString()
			insert := "INSERT INTO orders VALUES (1, 9007199254740993) RETURNING id, total"
			first, err := q.QueryOnce(ctx, id, insert, call)
			require.NoError(t, err)
			again, err := q.QueryOnce(ctx, id, insert, call)
			require.NoError(t, err)
			assert.Equal(t, first.Columns, again.Columns)
			require.Len(t, again.Rows, 1)
			assert.Equal(t, "9007199254740993", fmt.Sprint(again.Rows[0][1]), "integers stay exact")
			n, err := q.Query(ctx, id, "SELECT COUNT(*) FROM orders", true)
			require.NoError(t, err)
			assert.EqualValues(t, 1, n.Rows[0][0], "one row for one call")

			_, err = q.QueryOnce(ctx, id, insert, uuid.NewString())
			require.NoError(t, err)
			n, err = q.Query(ctx, id, "SELECT COUNT(*) FROM orders", true)
			require.NoError(t, err)
			assert.EqualValues(t, 2, n.Rows[0][0], "another call, another row")

			failing := uuid.NewString()
			_, err = q.QueryOnce(ctx, id, "INSERT INTO missing VALUES (1)", failing)
			var se *companydb.ErrStatement
			require.ErrorAs(t, err, &se)
			_, err = q.Query(ctx, id, "CREATE TABLE missing (id INTEGER)", false)
			require.NoError(t, err)
			_, err = q.QueryOnce(ctx, id, "INSERT INTO missing VALUES (1)", failing)
			require.NoError(t, err, "a failed statement stored nothing: the call runs")
		})
	}
}
