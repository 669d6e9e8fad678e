package models_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"holdco/models"
)

// The lifecycle table, written out again as the brief states it: the
// property tests below check the function against it and its invariants.
var wantTransitions = map[[2]models.TaskStatus]bool{
	{models.TaskPending, models.TaskDispatched}:   true,
	{models.TaskPending, models.TaskCancelled}:    true,
	{models.TaskDispatched, models.TaskRunning}:   true,
	{models.TaskDispatched, models.TaskFailed}:    true,
	{models.TaskDispatched, models.TaskCancelled}: true,
	{models.TaskRunning, models.TaskDone}:         true,
	{models.TaskRunning, models.TaskFailed}:       true,
	{models.TaskFailed, models.TaskPending}:       true,
	{models.TaskFailed, models.TaskCancelled}:     true,
}

func anyStatus() *rapid.Generator[models.TaskStatus] {
	// Unknown strings too: they never transition anywhere.
	return rapid.OneOf(rapid.SampledFrom(models.TaskStatuses),
		rapid.Map(rapid.String(), func(s string) models.TaskStatus { return models.TaskStatus(s) }))
}

func TestCanTransitionIsTheTable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		from, to := anyStatus().Draw(t, "from"), anyStatus().Draw(t, "to")
		got := models.CanTransition(from, to)
		if got != wantTransitions[[2]models.TaskStatus{from, to}] {
			t.Fatalf("CanTransition(%q, %q) = %v", from, to, got)
		}
		if from == to && got {
			t.Fatalf("staying in %q is not a transition", from)
		}
		if got != slices.Contains(models.NextTaskStatuses(from), to) {
			t.Fatalf("NextTaskStatuses(%q) disagrees with CanTransition", from)
		}
	})
}

// Walks of the lifecycle: from pending, every step the table allows keeps
// the task in a known status, only final statuses end a walk, done is
// reached only from running and a running task is never cancelled
// directly.
func TestLifecycleWalks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := models.TaskPending
		for step := 0; step < 30; step++ {
			next := models.NextTaskStatuses(s)
			if s.Final() {
				if len(next) != 0 {
					t.Fatalf("final %q has next statuses %v", s, next)
				}
				break
			}
			if len(next) == 0 {
				t.Fatalf("non-final %q has no way out", s)
			}
			to := rapid.SampledFrom(next).Draw(t, "to")
			if !to.Valid() {
				t.Fatalf("%q → unknown %q", s, to)
			}
			if to == models.TaskDone && s != models.TaskRunning {
				t.Fatalf("done reached from %q, not running", s)
			}
			if to == models.TaskCancelled && s == models.TaskRunning {
				t.Fatal("a running task is cancelled only through its run")
			}
			s = to
		}
	})
}

func TestDeletableAndFinalStatuses(t *testing.T) {
	for _, s := range models.TaskStatuses {
		assert.Equal(t, s == models.TaskPending || s == models.TaskFailed || s == models.TaskDispatched, s.Deletable(), s)
		assert.Equal(t, s == models.TaskDone || s == models.TaskCancelled, s.Final(), s)
		assert.True(t, s.Valid())
	}
	assert.False(t, models.TaskStatus("archived").Valid())
	assert.False(t, models.TaskStatus("archived").Final())
	assert.False(t, models.TaskStatus("").Deletable())
}
