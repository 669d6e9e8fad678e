package testenv

import (
	"slices"
	"sync"
	"testing"
)

// Iteration is the testing.TB of one iteration of a property test
// (rapid.Check): what is registered with its Cleanup runs at End, not when
// the whole test ends. A property test that opens a store in each of its
// hundred iterations so holds one store's connections at a time instead of
// a hundred (on Postgres, more than the server's max_connections).
type Iteration struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
}

// NewIteration starts an iteration of t; defer its End.
func NewIteration(t testing.TB) *Iteration {
	return &Iteration{TB: t}
}

// Cleanup registers f to run at End, after the functions registered after
// it (the order testing.T uses).
func (it *Iteration) Cleanup(f func()) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.cleanups = append(it.cleanups, f)
}

// End runs the registered functions, last first. It runs each once, even
// when called again.
func (it *Iteration) End() {
	it.mu.Lock()
	fs := it.cleanups
	it.cleanups = nil
	it.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
}
