package testenv_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"holdco/testenv"
)

func TestIterationRunsItsCleanupsAtEnd(t *testing.T) {
	var order []int
	it := testenv.NewIteration(t)
	it.Cleanup(func() { order = append(order, 1) })
	it.Cleanup(func() { order = append(order, 2) })
	assert.Empty(t, order, "nothing runs before End")
	it.End()
	assert.Equal(t, []int{2, 1}, order, "last registered runs first")
	it.End()
	assert.Equal(t, []int{2, 1}, order, "a second End runs nothing again")
}

// A store opened in an iteration is closed at its End: on Postgres, its
// connections are returned to the server before the next iteration.
func TestIterationClosesItsStore(t *testing.T) {
	it := testenv.NewIteration(t)
	s := testenv.NewStore(it)
	it.End()
	assert.Error(t, s.Ping(t.Context()), "the store is closed at End")
}
