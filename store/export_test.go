package store

import "gorm.io/gorm"

// GormDB exposes the store's connection to the external tests that run
// statements the store has no method for (a failing one, a raw scan).
func GormDB(s *Store) *gorm.DB { return s.db }
