package store

import (
	"context"
	"sync"
)

// hooks are the Store's listeners, shared by the Store and its
// transactions.
type hooks struct {
	mu            sync.RWMutex
	accountChange []func(conglomerateID string)
}

// OnAccountChange registers fn to be told the id of every conglomerate
// whose row this Store updates or deletes (plan, subscription, settings,
// account deletion): the use cases drop what they cached of it. fn runs
// after the statement, before the enclosing transaction (if any) commits,
// so a reader may still cache the old row until its cache expires.
func (s *Store) OnAccountChange(fn func(conglomerateID string)) {
	s.hooks.mu.Lock()
	s.hooks.accountChange = append(s.hooks.accountChange, fn)
	s.hooks.mu.Unlock()
}

// accountChanged tells the listeners that the conglomerates changed.
func (s *Store) accountChanged(ids ...string) {
	s.hooks.mu.RLock()
	fns := s.hooks.accountChange
	s.hooks.mu.RUnlock()
	for _, fn := range fns {
		for _, id := range ids {
			fn(id)
		}
	}
}

// listensToAccounts reports whether anyone listens (a lookup only they
// need can be skipped).
func (s *Store) listensToAccounts() bool {
	s.hooks.mu.RLock()
	defer s.hooks.mu.RUnlock()
	return len(s.hooks.accountChange) > 0
}

// conglomerateIDsWhere lists the ids of the conglomerates matching where,
// for the listeners of a change made by another key (customer id).
func (s *Store) conglomerateIDsWhere(ctx context.Context, where string, arg any) []string {
	var ids []string
	_ = s.db.WithContext(ctx).Table("conglomerates").Where(where, arg).Pluck("id", &ids).Error
	return ids
}
