package background

import (
	"context"
	"errors"
	"time"
)

// Batch says how Drain reads an outbox: the rows whose commit recorded a
// workflow to start (or signal) that a crash or an unreachable Temporal
// left undone.
type Batch[T any] struct {
	// Limit is the most rows one fetch returns (positive).
	Limit int
	// Key names a row (required). A row its start leaves in the outbox (a
	// turn stays queued until its workflow's first activity marks it) is
	// fetched again; the drain starts it once.
	Key func(T) string
}

// ErrSkip, returned by a start, says the row needed no start (another
// started it, or it was settled otherwise): the drain does not count it
// and goes on.
var ErrSkip = errors.New("outbox row skipped")

// Drain is the loop of every workflow-start outbox: it fetches a batch of
// rows, starts each in order, and fetches again while the batch was full
// and held a row not seen before, so a backlog drains within one pass. It
// stops at the first failed start (Temporal is most likely unreachable:
// waiting a start's timeout for each row would hold shutdown for minutes),
// at a failed fetch and when ctx ends, and returns how many rows it
// started with that error. A failed row stays in the outbox for the next
// pass.
func Drain[T any](ctx context.Context, b Batch[T], fetch func(ctx context.Context, limit int) ([]T, error), start func(ctx context.Context, row T) error) (int, error) {
	started := 0
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return started, err
		}
		rows, err := fetch(ctx, b.Limit)
		if err != nil {
			return started, err
		}
		fresh := 0
		for _, row := range rows {
			key := b.Key(row)
			if seen[key] {
				continue
			}
			seen[key] = true
			fresh++
			if err := ctx.Err(); err != nil {
				return started, err
			}
			switch err := start(ctx, row); {
			case err == nil:
				started++
			case errors.Is(err, ErrSkip):
			default:
				return started, err
			}
		}
		if len(rows) < b.Limit || fresh == 0 {
			return started, nil
		}
	}
}

// OutboxBatch is how many rows an Outbox reads at a time.
const OutboxBatch = 100

// Outbox is a workflow-start outbox whose rows are due once older than a
// grace (the request that wrote a row starts its workflow itself, and
// rarely fails to). It is read OutboxBatch rows at a time.
type Outbox[T any] struct {
	// Key names a row (Batch.Key).
	Key func(T) string
	// Pending returns up to limit rows written (or changed) before the
	// time and not yet started, oldest first.
	Pending func(ctx context.Context, before time.Time, limit int) ([]T, error)
	// Start starts (or signals) a row's workflow and takes the row out of
	// the outbox, or returns ErrSkip or the failure.
	Start func(ctx context.Context, row T) error
}

// Sweep drains the rows older than grace (Drain) and returns how many it
// started.
func (o Outbox[T]) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	before := time.Now().UTC().Add(-grace)
	return Drain(ctx, Batch[T]{Limit: OutboxBatch, Key: o.Key},
		func(ctx context.Context, limit int) ([]T, error) { return o.Pending(ctx, before, limit) }, o.Start)
}
