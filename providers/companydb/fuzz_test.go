package companydb_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"holdco/providers/companydb"
)

// FuzzQueryStatementGuard runs arbitrary statements as query_database does
// on a company's SQLite database (read-only by default, read-write when
// asked), beside another company's database. Whatever the statement:
// read-only leaves the company's database bytes as they were; neither mode
// creates, changes or removes any file but the company's own database and
// its journal (no ATTACH, VACUUM INTO, file functions, extensions), never
// touches the other company's file, and no answer names the server's
// directory.
func FuzzQueryStatementGuard(f *testing.F) {
	for _, s := range []string{
		"SELECT name, score FROM leads", "INSERT INTO leads VALUES ('x', 1)", "DROP TABLE leads", "ATTACH DATABASE 'x.db' AS x",
		"VACUUM INTO 'copy.db'", "PRAGMA database_list", "PRAGMA journal_mode=delete", "SELECT load_extension('x')",
		"PRAGMA writable_schema=1", "CREATE VIRTUAL TABLE v USING fts5(a)", "CREATE VIRTUAL TABLE f USING fsdir", "SELECT readfile('/etc/passwd')",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000) SELECT * FROM c", "PRAGMA temp_store_directory='/tmp'",
		"CREATE TRIGGER t AFTER INSERT ON leads BEGIN SELECT 1; END", "REINDEX", "PRAGMA integrity_check", "SELECT * FROM sqlite_dbpage",
		"CREATE TEMP TABLE t(a)", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT a", "DETACH main",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	ctx := context.Background()
	root := f.TempDir()
	db, err := companydb.NewSQLite(root)
	if err != nil {
		f.Fatal(err)
	}
	id, other := uuid.NewString(), uuid.NewString()
	for _, c := range []string{id, other} {
		if _, err := db.Ensure(ctx, c); err != nil {
			f.Fatal(err)
		}
	}
	if _, err := db.Query(ctx, id, "CREATE TABLE leads (name TEXT, score INTEGER)", false); err != nil {
		f.Fatal(err)
	}
	own := map[string]bool{id + ".db": true, id + ".db-wal": true, id + ".db-shm": true, id + ".db-journal": true}
	abs, _ := filepath.Abs(root)
	f.Fuzz(func(t *testing.T, stmt string, readOnly bool) {
		before := snapshot(t, root)
		_, err := db.Query(ctx, id, stmt, readOnly)
		if err != nil && (strings.Contains(err.Error(), abs) || strings.Contains(err.Error(), root)) {
			t.Fatalf("%q: the answer names the directory: %v", stmt, err)
		}
		after := snapshot(t, root)
		for name, sum := range after {
			if own[name] && !readOnly {
				continue
			}
			if name == id+".db-shm" {
				continue // the shared-memory index, rebuilt by any reader
			}
			if _, existed := before[name]; !existed && sum == sha256.Sum256(nil) && strings.HasPrefix(name, id+".db-") {
				continue // an empty journal a reader of a WAL database opens
			}
			if before[name] != sum {
				t.Fatalf("%q (read-only %v) changed or created %s", stmt, readOnly, name)
			}
		}
		for name := range before {
			if _, ok := after[name]; !ok && !own[name] {
				t.Fatalf("%q (read-only %v) removed %s", stmt, readOnly, name)
			}
		}
	})
}

// snapshot hashes every file under root.
func snapshot(t *testing.T, root string) map[string][32]byte {
	out := map[string][32]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
