package devoidc

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// MemoryUsers keeps users in memory (tests, throwaway runs).
type MemoryUsers struct {
	mu      sync.Mutex
	byID    map[string]User
	byEmail map[string]string
	hashes  map[string][]byte
}

var _ Users = (*MemoryUsers)(nil)

// NewMemoryUsers returns an empty user set.
func NewMemoryUsers() *MemoryUsers {
	return &MemoryUsers{byID: map[string]User{}, byEmail: map[string]string{}, hashes: map[string][]byte{}}
}

func (m *MemoryUsers) UserByEmail(_ context.Context, email string) (User, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.byEmail[email]
	if !ok {
		return User{}, nil, ErrUserNotFound
	}
	return m.byID[id], m.hashes[id], nil
}

func (m *MemoryUsers) UserByID(_ context.Context, id string) (User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.byID[id]
	if !ok {
		return User{}, ErrUserNotFound
	}
	return u, nil
}

func (m *MemoryUsers) CreateUser(_ context.Context, u User, hash []byte) (User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byEmail[u.Email]; ok {
		return User{}, ErrEmailTaken
	}
	u.ID = uuid.NewString()
	m.byID[u.ID], m.byEmail[u.Email], m.hashes[u.ID] = u, u.ID, hash
	return u, nil
}
