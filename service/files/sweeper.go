package files

import (
	"context"
	"log/slog"
	"time"

	"holdco/store"
)

// BlobSweeper deletes the blobs that no file row names any more: those of
// deleted or replaced files whose immediate delete failed (or whose
// process died before it), and those of uploads that never committed; and,
// on a blob store that keeps them (PartialSweeper), the partial writes of
// uploads a crash cut. It runs on the worker role.
type BlobSweeper struct {
	Store  *store.Store
	Blobs  BlobStore
	Logger *slog.Logger
	// Now is the clock (nil: the wall clock).
	Now func() time.Time
}

// Sweeper timing.
const (
	// BlobSweepInterval is how often the worker's sweeper looks.
	BlobSweepInterval = 30 * time.Second
	// blobRetryAfter is when a failed delete is tried again.
	blobRetryAfter = 5 * time.Minute
	blobSweepBatch = 200
)

// PartialSweeper is a blob store that keeps the partial writes of
// interrupted uploads (the local directory's tmp/): SweepPartial deletes
// those last written before before and returns how many.
type PartialSweeper interface {
	SweepPartial(ctx context.Context, before time.Time) (int, error)
}

// Sweep deletes every due blob and, on a PartialSweeper, the partial
// writes older than UploadGrace (no upload runs that long: one still
// writing then fails anyway); it returns how many blobs and partial writes
// it deleted. A delete that fails is retried after blobRetryAfter; the
// sweep goes on with the next one (failures are per blob, not an
// unreachable store, more often than with Temporal) but stops at the end
// of a batch with failures.
func (w *BlobSweeper) Sweep(ctx context.Context) (int, error) {
	deleted, err := w.sweepDue(ctx)
	if err != nil {
		return deleted, err
	}
	if ps, ok := w.Blobs.(PartialSweeper); ok {
		n, err := ps.SweepPartial(ctx, w.now().Add(-UploadGrace))
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, ctx.Err()
}

// sweepDue deletes the blobs blob_deletions names as due.
func (w *BlobSweeper) sweepDue(ctx context.Context) (int, error) {
	now := w.now()
	deleted := 0
	for {
		due, err := w.Store.Files().DueBlobDeletions(ctx, now, blobSweepBatch)
		if err != nil {
			return deleted, err
		}
		failed := 0
		for _, d := range due {
			if ctx.Err() != nil {
				return deleted, ctx.Err()
			}
			// Claim first: an upload whose blob this is can no longer
			// commit, so no row will name a blob being deleted.
			ok, err := w.Store.Files().ClaimBlobDeletion(ctx, d.BlobKey, now, now.Add(blobRetryAfter))
			if err != nil {
				return deleted, err
			}
			if !ok {
				continue
			}
			if err := w.Blobs.Delete(ctx, d.BlobKey); err != nil {
				failed++
				w.Logger.WarnContext(ctx, "blob sweep: delete failed; retried later", "company", d.CompanyID, "error", err)
				continue
			}
			if err := w.Store.Files().CompleteBlobDeletion(ctx, d.BlobKey); err != nil {
				return deleted, err
			}
			deleted++
		}
		if len(due) < blobSweepBatch || failed > 0 {
			return deleted, ctx.Err()
		}
	}
}

func (w *BlobSweeper) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now().UTC()
}
