package testenv

import (
	"context"
	"log/slog"
	"testing"

	"holdco/store"
)

// NewReplicaStores returns n stores on one migrated, empty database, as n
// processes of a cluster would open it: each has its own connections (and
// on SQLite its own write gate), so only the database makes them agree.
// They are closed (and the Postgres schema dropped) when the test ends.
func NewReplicaStores(t testing.TB, n int) []*store.Store {
	t.Helper()
	first, dsn := newStore(t, slog.New(slog.DiscardHandler))
	stores := []*store.Store{first}
	for range n - 1 {
		s, err := store.Open(context.Background(), dsn, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("testenv: open replica store: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	return stores
}
