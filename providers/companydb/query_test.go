package companydb_test

import (
	"context"
	"testing"
	"time"

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

			// A slow statement is cut at QueryTimeout.
			began := time.Now()
			_, err = q.Query(ctx, id, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT COUNT(*) FROM n", true)
			require.ErrorAs(t, err, &se)
			assert.Contains(t, se.Msg, "longer than")
			assert.Less(t, time.Since(began), companydb.QueryTimeout+10*time.Second)
		})
	}
}
