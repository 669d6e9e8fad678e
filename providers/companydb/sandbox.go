package companydb

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite sandbox: a statement of the company's runs on a connection
// that can reach its own database file and nothing else. SQLite's own
// mechanisms enforce it, whatever the statement's text:
//
//   - SQLITE_LIMIT_ATTACHED is 0: no ATTACH, hence no other database file
//     opened or created, and no VACUUM INTO (it attaches its target);
//   - an authorizer (sqlite3_set_authorizer) denies ATTACH and DETACH,
//     load_extension and the file functions, every PRAGMA but the schema
//     and counter ones listed in allowedPragmas (so no database_list, which
//     shows the file's path, no temp_store_directory, no journal_mode), and
//     virtual tables of other modules than allowedModules;
//   - SQLITE_DBCONFIG_DEFENSIVE (no writable_schema, no writes to
//     sqlite_dbpage) and extension loading off.
//
// The authorizer also sees what the company's views and triggers run (they
// are compiled into the statement), so the schema cannot get around it.
//
// The driver (modernc.org/sqlite) has no authorizer API: sandbox reaches
// the connection's sqlite3 handle and calls the C API (modernc.org/sqlite/lib)
// on it. If the handle cannot be found (a driver upgrade changed it), the
// connection is refused rather than run unconfined.

// errSandbox: the connection could not be confined; the statement is not
// run.
var errSandbox = errors.New("companydb: the SQLite connection cannot be sandboxed (driver changed?)")

// allowedPragmas are the pragmas a company's statement may run; true: with
// an argument too (a table or index name, or a setting of this connection
// or of the database's header that touches no file).
var allowedPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
	"collation_list": false, "function_list": false, "module_list": false, "pragma_list": false, "compile_options": false,
	"user_version": true, "application_id": true,
	"foreign_keys": true, "defer_foreign_keys": true, "recursive_triggers": true,
	"page_count": false, "page_size": false, "freelist_count": false, "encoding": false,
	"data_version": false, "schema_version": false, "auto_vacuum": false,
	"optimize": false,
}

// deniedFunctions touch files or load code.
var deniedFunctions = map[string]bool{
	"load_extension": true, "readfile": true, "writefile": true, "edit": true, "lsmode": true, "fts3_tokenizer": true,
}

// allowedModules are the virtual table modules a company may create
// tables of (none of them reads or writes files).
var allowedModules = map[string]bool{"fts5": true, "fts5vocab": true, "rtree": true, "rtree_i32": true, "geopoly": true}

// authorize is the connection's sqlite3_set_authorizer callback (a plain
// function: the C pointer of a closure is undefined).
func authorize(tls *libc.TLS, _ uintptr, action int32, z1, z2, _, _ uintptr) int32 {
	str := func(p uintptr) string {
		if p == 0 {
			return ""
		}
		return strings.ToLower(libc.GoString(p))
	}
	switch action {
	case sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH:
		return sqlite3.SQLITE_DENY
	case sqlite3.SQLITE_PRAGMA:
		withArg, ok := allowedPragmas[str(z1)]
		if !ok || (z2 != 0 && !withArg) {
			return sqlite3.SQLITE_DENY
		}
	case sqlite3.SQLITE_FUNCTION:
		if deniedFunctions[str(z2)] {
			return sqlite3.SQLITE_DENY
		}
	case sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE:
		if !allowedModules[str(z2)] {
			return sqlite3.SQLITE_DENY
		}
	}
	return sqlite3.SQLITE_OK
}

// cFuncPointer is a Go function as the C function pointer the transpiled
// SQLite calls (the driver's own conversion, https://golang.org/s/go11func).
func cFuncPointer[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

// sandbox confines the connection c (see above). It must run before any
// statement of the company's.
func sandbox(c *sql.Conn) error {
	if _, err := sqlite.Limit(c, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return errSandbox
	}
	return c.Raw(func(driverConn any) error {
		db, ok := handle(driverConn)
		if !ok {
			return errSandbox
		}
		tls := libc.NewTLS()
		defer tls.Close()
		// The handle must be the connection's: it sees the limit set through
		// the driver.
		if sqlite3.Xsqlite3_limit(tls, db, sqlite3.SQLITE_LIMIT_ATTACHED, -1) != 0 {
			return errSandbox
		}
		for op, on := range map[int32]int32{
			sqlite3.SQLITE_DBCONFIG_DEFENSIVE:             1,
			sqlite3.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION: 0,
		} {
			va := libc.NewVaList(on, uintptr(0))
			rc := sqlite3.Xsqlite3_db_config(tls, db, op, va)
			libc.Xfree(tls, va)
			if rc != sqlite3.SQLITE_OK {
				return errSandbox
			}
		}
		if sqlite3.Xsqlite3_set_authorizer(tls, db, cFuncPointer(authorize), 0) != sqlite3.SQLITE_OK {
			return errSandbox
		}
		return nil
	})
}

// handle is the sqlite3* of the driver's connection (its unexported db
// field); ok is false when the driver's connection is not what it was
// written for.
func handle(driverConn any) (uintptr, bool) {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	t := v.Elem().Type()
	if t.PkgPath() != "modernc.org/sqlite" || t.Name() != "conn" {
		return 0, false
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return 0, false
	}
	return uintptr(f.Uint()), true
}
