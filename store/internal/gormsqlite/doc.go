// Package gormsqlite is GORM's SQLite dialector, gorm.io/driver/sqlite
// v1.6.0 (MIT licence, LICENSE in this folder), without its blank import of
// github.com/mattn/go-sqlite3. That import compiled SQLite's C amalgamation
// with gcc into every build of holdco (twice in `make test`: once with
// -race, once without), although holdco registers and uses the pure-Go
// driver (modernc.org/sqlite, as "sqlite"). The code is otherwise the
// upstream's (less one unused method and a no-op break that staticcheck
// reports); internal/layering keeps the cgo driver out of holdco's
// packages.
package gormsqlite
