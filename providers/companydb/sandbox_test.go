package companydb_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/companydb"
)

// sandboxed is a company database adapter with the directory its files
// live in ("" for Postgres: the server's).
type sandboxed struct {
	q   querier
	dir string
}

func sandboxAdapters(t *testing.T) map[string]sandboxed {
	t.Helper()
	dir := t.TempDir()
	sqlite, err := companydb.NewSQLite(dir)
	require.NoError(t, err)
	out := map[string]sandboxed{"sqlite": {sqlite, dir}}
	if dsn := os.Getenv("TEST_DATABASE_URL"); dsn != "" {
		pg, err := companydb.NewPostgres(dsn, []byte("test secret"), nil)
		require.NoError(t, err)
		t.Cleanup(func() { pg.Close() })
		out["postgres"] = sandboxed{pg, ""}
	}
	return out
}

// A company's statement reaches its own database and nothing else, on
// both databases and in both modes: every statement that would open,
// create, read or list a file of the server's, run a program, load code,
// reach another database or change the session's identity is refused by
// the database itself, creates no file and names no file of the server's.
// Each statement runs on both databases (the other one's dialect is a
// syntax error there, which is a refusal too).
func TestQuerySandbox(t *testing.T) {
	ctx := context.Background()
	for name, a := range sandboxAdapters(t) {
		t.Run(name, func(t *testing.T) {
			id, other := uuid.NewString(), uuid.NewString()
			for _, c := range []string{id, other} {
				t.Cleanup(func() { _ = a.q.Drop(ctx, c) })
				_, err := a.q.Ensure(ctx, c)
				require.NoError(t, err)
			}
			_, err := a.q.Query(ctx, id, "CREATE TABLE probe (line TEXT)", false)
			require.NoError(t, err)

			// Targets outside the company's database: a fresh directory, and
			// (SQLite) the other company's file and where the local
			// registrar keeps its names.
			outside := t.TempDir()
			shared := filepath.Join(os.TempDir(), "holdco-sandbox-"+uuid.NewString()) // writable by the Postgres server too
			t.Cleanup(func() { _ = os.Remove(shared) })
			otherFile := filepath.Join(a.dir, other+".db")
			created := []string{filepath.Join(outside, "taken"), filepath.Join(outside, "copy.db"), filepath.Join(outside, "w"), shared}

			statements := map[string]string{
				"ATTACH":                            "ATTACH DATABASE '" + filepath.Join(outside, "taken") + "' AS x",
				"ATTACH another company's database": "ATTACH DATABASE '" + otherFile + "' AS o",
				"ATTACH memory":                     "ATTACH DATABASE ':memory:' AS m",
				"ATTACH URI":                        "ATTACH DATABASE 'file:" + filepath.Join(outside, "taken") + "?mode=rwc' AS u",
				"DETACH":                            "DETACH DATABASE main",
				"VACUUM INTO":                       "VACUUM INTO '" + filepath.Join(outside, "copy.db") + "'",
				"pragma_database_list":              "SELECT * FROM pragma_database_list",
				"PRAGMA database_list":              "PRAGMA database_list",
				"PRAGMA temp_store_directory":       "PRAGMA temp_store_directory = '" + outside + "'",
				"PRAGMA writable_schema":            "PRAGMA writable_schema = ON",
				"PRAGMA query_only off":             "PRAGMA query_only = 0",
				"load_extension":                    "SELECT load_extension('" + filepath.Join(outside, "lib") + "')",
				"readfile":                          "SELECT readfile('/etc/hostname')",
				"writefile":                         "SELECT writefile('" + filepath.Join(outside, "w") + "', 'x')",
				"COPY TO file":                      "COPY (SELECT 1) TO '" + shared + "'",
				"COPY FROM file":                    "COPY probe FROM '/etc/hostname'",
				"COPY TO PROGRAM":                   "COPY (SELECT 1) TO PROGRAM 'touch " + shared + "'",
				"COPY FROM PROGRAM":                 "COPY probe FROM PROGRAM 'touch " + shared + "'",
				"pg_read_file":                      "SELECT pg_read_file('/etc/hostname')",
				"pg_read_binary_file":               "SELECT pg_read_binary_file('/etc/hostname')",
				"pg_ls_dir":                         "SELECT pg_ls_dir('.')",
				"pg_stat_file":                      "SELECT pg_stat_file('/etc/hostname')",
				"lo_import":                         "SELECT lo_import('/etc/hostname')",
				"lo_export":                         "SELECT lo_export(lo_create(0), '" + shared + "')",
				"CREATE EXTENSION dblink":           "CREATE EXTENSION dblink",
				"CREATE EXTENSION file_fdw":         "CREATE EXTENSION file_fdw",
				"CREATE EXTENSION postgres_fdw":     "CREATE EXTENSION postgres_fdw",
				"dblink":                            "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)",
				"LOAD":                              "LOAD 'dblink'",
				"SET ROLE":                          "SET ROLE postgres",
				"SET SESSION AUTHORIZATION":         "SET SESSION AUTHORIZATION postgres",
				"SHOW data_directory":               "SHOW data_directory",
				"ALTER SYSTEM":                      "ALTER SYSTEM SET work_mem = '1MB'",
				"CREATE TABLESPACE":                 "CREATE TABLESPACE outside LOCATION '" + outside + "'",
				"CREATE FUNCTION LANGUAGE c":        "CREATE FUNCTION pid() RETURNS int LANGUAGE c AS 'libc', 'getpid'",
			}
			for _, mode := range []string{"read_only", "read_write"} {
				for stmtName, stmt := range statements {
					t.Run(mode+"/"+stmtName, func(t *testing.T) {
						_, err := a.q.Query(ctx, id, stmt, mode == "read_only")
						var se *companydb.ErrStatement
						require.ErrorAs(t, err, &se, "the statement ran")
						if a.dir != "" {
							assert.NotContains(t, se.Msg, a.dir, "the answer names the server's files")
						}
						for _, f := range created {
							assert.NoFileExists(t, f)
							_ = os.Remove(f) // the next statement starts clean
						}
					})
				}
			}

			if name == "sqlite" {
				// A view or a trigger of the company's own schema cannot get
				// around the authorizer: it is compiled into the statement.
				_, _ = a.q.Query(ctx, id, "CREATE VIEW leak AS SELECT * FROM pragma_database_list", false)
				_, err = a.q.Query(ctx, id, "SELECT * FROM leak", true)
				var se *companydb.ErrStatement
				require.ErrorAs(t, err, &se, "a view over pragma_database_list")
				assert.Contains(t, se.Msg, "not authorized")
				assert.NotContains(t, se.Msg, a.dir)
				_, _ = a.q.Query(ctx, id, "CREATE TRIGGER attach_on_insert AFTER INSERT ON probe BEGIN SELECT load_extension('"+filepath.Join(outside, "lib")+"'); END", false)
				_, err = a.q.Query(ctx, id, "INSERT INTO probe (line) VALUES ('x')", false)
				require.ErrorAs(t, err, &se, "a trigger calling load_extension")
				assert.Contains(t, se.Msg, "not authorized")
				_, _ = a.q.Query(ctx, id, "DROP TRIGGER IF EXISTS attach_on_insert", false)
				_, _ = a.q.Query(ctx, id, "DROP VIEW IF EXISTS leak", false)
			}

			// What the company needs still works.
			_, err = a.q.Query(ctx, id, "INSERT INTO probe (line) VALUES ('kept')", false)
			require.NoError(t, err)
			r, err := a.q.Query(ctx, id, "SELECT line FROM probe", true)
			require.NoError(t, err)
			assert.Equal(t, [][]any{{"kept"}}, r.Rows)
			if name == "sqlite" {
				for _, ok := range []struct {
					sql      string
					readOnly bool
				}{
					{"SELECT name FROM pragma_table_info('probe')", true},
					{"PRAGMA table_info(probe)", true},
					{"PRAGMA index_list(probe)", true},
					{"PRAGMA foreign_keys", true},
					{"PRAGMA user_version = 3", false},
					{"SELECT name FROM sqlite_schema", true},
					{"CREATE VIRTUAL TABLE notes USING fts5(body)", false},
					{"CREATE TEMP TABLE scratch (n INTEGER)", false},
				} {
					_, err := a.q.Query(ctx, id, ok.sql, ok.readOnly)
					assert.NoError(t, err, ok.sql)
				}
				r, err := a.q.Query(ctx, id, "PRAGMA user_version", true)
				require.NoError(t, err)
				assert.EqualValues(t, 3, r.Rows[0][0])
			}
		})
	}
}

// The refusal says why, in words the agent can act on.
func TestQuerySandboxExplainsRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := companydb.NewSQLite(dir)
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id)
	require.NoError(t, err)
	_, err = s.Query(ctx, id, "SELECT file FROM pragma_database_list", true)
	var se *companydb.ErrStatement
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Msg, "only the company's own database")
	assert.NotContains(t, se.Msg, dir)
}

// A company role that was given the server's file and program roles (by
// an operator, or an earlier version) loses them at the next Ensure: the
// role is a member of no other role.
func TestEnsureRevokesRoleMemberships(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set (SQLite files have no roles)")
	}
	ctx := context.Background()
	pg, err := companydb.NewPostgres(dsn, []byte("test secret"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	id := uuid.NewString()
	t.Cleanup(func() { _ = pg.Drop(ctx, id) })
	_, err = pg.Ensure(ctx, id)
	require.NoError(t, err)
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })

	role := `"` + companydb.Name(id) + `"`
	granted := []string{"pg_read_server_files", "pg_write_server_files", "pg_execute_server_program", "pg_read_all_settings", "pg_monitor"}
	for _, g := range granted {
		_, err := admin.ExecContext(ctx, "GRANT "+g+" TO "+role)
		require.NoError(t, err)
	}
	member := func() bool {
		r, err := pg.Query(ctx, id, "SELECT pg_has_role('pg_read_server_files', 'MEMBER')", true)
		require.NoError(t, err)
		return r.Rows[0][0].(bool)
	}
	require.True(t, member(), "the grants took effect")

	_, err = pg.Ensure(ctx, id)
	require.NoError(t, err)
	var roles []string
	rows, err := admin.QueryContext(ctx, "SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = $1)", companydb.Name(id))
	require.NoError(t, err)
	for rows.Next() {
		var r string
		require.NoError(t, rows.Scan(&r))
		roles = append(roles, r)
	}
	require.NoError(t, rows.Err())
	assert.Empty(t, roles, "memberships left")
	assert.False(t, member())
	for _, stmt := range []string{"SELECT pg_read_file('/etc/hostname')", "COPY (SELECT 1) TO PROGRAM 'true'", "SHOW data_directory"} {
		_, err = pg.Query(ctx, id, stmt, true)
		var se *companydb.ErrStatement
		require.ErrorAs(t, err, &se, stmt)
		assert.True(t, strings.Contains(se.Msg, "permission denied") || strings.Contains(se.Msg, "must be superuser"), se.Msg)
	}
}
