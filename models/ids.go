package models

import "github.com/google/uuid"

// newID returns a random (version 4) UUID string. IDs are made in Go rather
// than by the database so the same code works on SQLite and Postgres and a
// caller knows the id before the row is written.
func newID() string { return uuid.NewString() }

// ensureID fills an empty id; a preset id is kept so callers (and tests) can
// choose one.
func ensureID(id *string) {
	if *id == "" {
		*id = newID()
	}
}
