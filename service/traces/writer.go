package traces

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service/files"
)

// Layout of a run's trace on blob storage.
const (
	// TraceName is the joined trace of a finished run.
	TraceName = "trace.jsonl"
	// fileExt ends every trace file's name.
	fileExt = ".jsonl"
	// ContentType is the media type of trace files.
	ContentType = "application/x-ndjson"
)

// RunPrefix is the folder of a run's trace files.
func RunPrefix(runID string) string { return "runs/" + runID + "/" }

// partPattern is a part's name: what the blob keys allow, short, and
// never the joined trace's name.
var partPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// checkRunID refuses anything but a canonical (lower-case) UUID, the only
// form holdco's ids take, so one run has one folder.
func checkRunID(runID string) *models.Error {
	if u, err := uuid.Parse(runID); err != nil || u.String() != runID {
		return models.Errorf(models.CodeInvalidArgument, "run_id must be a UUID in its canonical lower-case form.").WithField("run_id")
	}
	return nil
}

// Writer writes traces on the worker.
type Writer struct {
	blobs files.BlobStore
	now   func() time.Time
}

// NewWriter writes through blobs; a nil store answers every call with
// upstream_unavailable.
func NewWriter(blobs files.BlobStore) *Writer {
	return &Writer{blobs: blobs, now: time.Now}
}

// WithClock returns the writer stamping events that have no time with
// now (tests).
func (w *Writer) WithClock(now func() time.Time) *Writer {
	c := *w
	c.now = now
	return &c
}

func (w *Writer) needBlobs() error {
	if w.blobs == nil {
		return models.Errorf(models.CodeUpstreamUnavailable, "Blob storage is not configured: run traces cannot be stored.")
	}
	return nil
}

// Append stores events as one part of the run's trace. part is unique per
// activity attempt's work (e.g. "000003-model", "000003-tool-01"; lower-case
// letters, digits and dashes, at most 64); writing the same part again
// replaces it (a retried activity rewrites its part, never duplicates it).
// Each event is sanitized first (Sanitize); an event without a time gets
// the writer's clock.
func (w *Writer) Append(ctx context.Context, runID, part string, events ...Event) error {
	if err := w.needBlobs(); err != nil {
		return err
	}
	if err := checkRunID(runID); err != nil {
		return err
	}
	if !partPattern.MatchString(part) || part+fileExt == TraceName {
		return models.Errorf(models.CodeInvalidArgument, "A trace part is 1 to 64 lower-case letters, digits and dashes, and not %q.", strings.TrimSuffix(TraceName, fileExt)).WithField("part")
	}
	b, err := w.encode(events)
	if err != nil {
		return fmt.Errorf("traces: append %s: %w", part, err)
	}
	if _, err := w.blobs.Put(ctx, RunPrefix(runID)+part+fileExt, bytes.NewReader(b), int64(len(b)), ContentType); err != nil {
		return fmt.Errorf("traces: append %s: %w", part, err)
	}
	return nil
}

// encode is events as JSON lines, each sanitized (Sanitize) and stamped
// with the writer's clock when it has no time.
func (w *Writer) encode(events []Event) ([]byte, error) {
	var buf bytes.Buffer
	for _, e := range events {
		if e.Time.IsZero() {
			e.Time = w.now()
		}
		e.Time = e.Time.UTC()
		line, err := encodeLine(Sanitize(e))
		if err != nil {
			return nil, fmt.Errorf("encode %s event: %w", e.Type, err)
		}
		buf.Write(line)
	}
	return buf.Bytes(), nil
}

// Finish joins the parts in name order, then the last events (sanitized
// and stamped as Append does: the run's end), into runs/<run_id>/trace.jsonl
// and removes the parts once trace.jsonl is stored. The last events are
// written there only, not as a part first: one blob written and read less
// a run. It is idempotent: once trace.jsonl exists it only removes the
// parts left behind (a crash between the two steps), and a run without
// parts or last events stores nothing.
func (w *Writer) Finish(ctx context.Context, runID string, last ...Event) error {
	if err := w.needBlobs(); err != nil {
		return err
	}
	if err := checkRunID(runID); err != nil {
		return err
	}
	tail, err := w.encode(last)
	if err != nil {
		return fmt.Errorf("traces: finish: %w", err)
	}
	prefix := RunPrefix(runID)
	listed, err := w.blobs.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("traces: finish: %w", err)
	}
	joined := false
	var parts []models.BlobInfo
	var size int64
	for _, b := range runFiles(prefix, listed) {
		if b.name == TraceName {
			joined = true
			continue
		}
		parts = append(parts, b.BlobInfo)
		size += b.Size
	}
	if !joined && (len(parts) > 0 || len(tail) > 0) {
		body := &joinedParts{ctx: ctx, blobs: w.blobs, parts: parts}
		_, err := w.blobs.Put(ctx, prefix+TraceName, io.MultiReader(body, bytes.NewReader(tail)), size+int64(len(tail)), ContentType)
		body.Close()
		if err != nil {
			return fmt.Errorf("traces: finish: %w", err)
		}
	}
	for _, p := range parts {
		if err := w.blobs.Delete(ctx, p.Key); err != nil {
			return fmt.Errorf("traces: finish: remove part: %w", err)
		}
	}
	return nil
}

// runFile is a trace file directly in a run's folder.
type runFile struct {
	models.BlobInfo
	name string
}

// runFiles keeps the .jsonl files directly under prefix, in name order.
func runFiles(prefix string, listed []models.BlobInfo) []runFile {
	var out []runFile
	for _, b := range listed {
		name, ok := strings.CutPrefix(b.Key, prefix)
		if !ok || strings.Contains(name, "/") || !strings.HasSuffix(name, fileExt) {
			continue
		}
		out = append(out, runFile{BlobInfo: b, name: name})
	}
	return out // List sorts by key, so by name within one folder
}

// joinedParts reads the parts one after another, opening each only when
// the previous one is done.
type joinedParts struct {
	ctx   context.Context
	blobs files.BlobStore
	parts []models.BlobInfo
	cur   io.ReadCloser
}

func (j *joinedParts) Read(p []byte) (int, error) {
	for {
		if j.cur == nil {
			if len(j.parts) == 0 {
				return 0, io.EOF
			}
			rc, err := j.blobs.Open(j.ctx, j.parts[0].Key)
			if err != nil {
				return 0, fmt.Errorf("open part: %w", err)
			}
			j.cur, j.parts = rc, j.parts[1:]
		}
		n, err := j.cur.Read(p)
		if errors.Is(err, io.EOF) {
			_ = j.cur.Close()
			j.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (j *joinedParts) Close() {
	if j.cur != nil {
		_ = j.cur.Close()
		j.cur = nil
	}
}
