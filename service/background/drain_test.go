package background_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"holdco/service/background"
)

// outbox is an outbox table: fetch returns the oldest pending rows, a
// start marks its row (takes it out) unless the row is set to fail, to
// stay pending or to be skipped.
type outbox struct {
	pending []string
	fail    string // the start of this row fails
	stays   bool   // a started row stays pending (a turn until its first activity)
	skip    string // this row needs no start
	cancel  string // the start of this row ends the drain's context
	fetches int
	starts  []string
	stop    context.CancelFunc
}

var errTemporal = errors.New("temporal unreachable")

func (o *outbox) fetch(_ context.Context, limit int) ([]string, error) {
	o.fetches++
	return slices.Clone(o.pending[:min(limit, len(o.pending))]), nil
}

func (o *outbox) start(_ context.Context, row string) error {
	o.starts = append(o.starts, row)
	switch row {
	case o.fail:
		return errTemporal
	case o.cancel:
		o.stop()
	case o.skip:
		o.mark(row)
		return background.ErrSkip
	}
	if !o.stays {
		o.mark(row)
	}
	return nil
}

func (o *outbox) mark(row string) {
	o.pending = slices.DeleteFunc(o.pending, func(r string) bool { return r == row })
}

func rows(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("r%d", i)
	}
	return out
}

func TestDrain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		outbox    outbox
		cancelled bool // the context is cancelled before the drain
		started   int
		err       error
		fetches   int
		starts    []string
		left      int
	}{
		{name: "empty", fetches: 1},
		{name: "one short batch", outbox: outbox{pending: rows(2)}, started: 2, fetches: 1, starts: rows(2)},
		{name: "several full batches and a short one", outbox: outbox{pending: rows(7)}, started: 7, fetches: 3, starts: rows(7)},
		{name: "full batches then an empty one", outbox: outbox{pending: rows(6)}, started: 6, fetches: 3, starts: rows(6)},
		{name: "a failed start mid-batch stops the drain with the count", outbox: outbox{pending: rows(7), fail: "r4"},
			started: 4, err: errTemporal, fetches: 2, starts: rows(5), left: 3},
		{name: "a failed first start", outbox: outbox{pending: rows(3), fail: "r0"}, err: errTemporal, fetches: 1, starts: rows(1), left: 3},
		{name: "a cancelled context starts nothing", outbox: outbox{pending: rows(4)}, cancelled: true, err: context.Canceled, left: 4},
		{name: "a context ended mid-batch stops before the next start", outbox: outbox{pending: rows(7), cancel: "r1"},
			started: 2, err: context.Canceled, fetches: 1, starts: rows(2), left: 5},
		{name: "a skipped row is not counted", outbox: outbox{pending: rows(4), skip: "r1"}, started: 3, fetches: 2, starts: rows(4)},
		{name: "rows their start left pending are started once", outbox: outbox{pending: rows(7), stays: true},
			started: 3, fetches: 2, starts: rows(3), left: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			o := tc.outbox
			o.stop = cancel
			n, err := background.Drain(ctx, background.Batch[string]{Limit: 3, Key: func(r string) string { return r }}, o.fetch, o.start)
			assert.ErrorIs(t, err, tc.err) // nil: no error
			assert.Equal(t, tc.started, n, "started")
			assert.Equal(t, tc.fetches, o.fetches, "fetches")
			assert.Equal(t, tc.starts, o.starts, "starts, in order")
			assert.Len(t, o.pending, tc.left, "left pending")
		})
	}
}

// A failed fetch ends the drain with what it started before.
func TestDrainFetchFails(t *testing.T) {
	fetches := 0
	fetch := func(context.Context, int) ([]string, error) {
		fetches++
		if fetches == 2 {
			return nil, errTemporal
		}
		return rows(2), nil
	}
	n, err := background.Drain(context.Background(), background.Batch[string]{Limit: 2, Key: func(r string) string { return r }},
		fetch, func(context.Context, string) error { return nil })
	assert.ErrorIs(t, err, errTemporal)
	assert.Equal(t, 2, n)
}
