package traces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/service/files"
)

// Service answers the operator's trace endpoints.
type Service struct {
	blobs files.BlobStore
}

// New reads traces from blobs; a nil store answers every use case with
// upstream_unavailable.
func New(blobs files.BlobStore) *Service { return &Service{blobs: blobs} }

// File is one trace file of a run.
type File struct {
	Name      string // "trace.jsonl", or a part ("000003-model.jsonl")
	SizeBytes int64
	UpdatedAt time.Time
}

// Trace is a run's trace opened for reading; the caller closes Body.
type Trace struct {
	File
	Body io.ReadCloser
}

// listRun lists the run's trace files after the admin check; a run without
// any is not_found.
func (s *Service) listRun(ctx context.Context, runID string) ([]File, error) {
	if _, err := service.RequireAdmin(ctx); err != nil {
		return nil, err
	}
	if s.blobs == nil {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "Blob storage is not configured on this server.")
	}
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	prefix := RunPrefix(runID)
	listed, err := s.blobs.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("traces: list: %w", err)
	}
	var out []File
	for _, f := range runFiles(prefix, listed) {
		out = append(out, File{Name: f.name, SizeBytes: f.Size, UpdatedAt: f.ModTime.UTC()})
	}
	if len(out) == 0 {
		return nil, models.Errorf(models.CodeNotFound, "Run %s has no trace.", runID)
	}
	return out, nil
}

// ListFiles returns the run's trace files, sorted by name (admin only).
func (s *Service) ListFiles(ctx context.Context, runID string) ([]File, error) {
	return s.listRun(ctx, runID)
}

// OpenTrace opens the run's trace (admin only): trace.jsonl once the run
// has finished, else the first of its files by name. A file removed between
// listing and opening (the run finishing meanwhile) is looked up again.
func (s *Service) OpenTrace(ctx context.Context, runID string) (Trace, error) {
	for attempt := 0; ; attempt++ {
		list, err := s.listRun(ctx, runID)
		if err != nil {
			return Trace{}, err
		}
		pick := list[0]
		for _, f := range list {
			if f.Name == TraceName {
				pick = f
			}
		}
		body, err := s.blobs.Open(ctx, RunPrefix(runID)+pick.Name)
		if errors.Is(err, fs.ErrNotExist) && attempt == 0 {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			return Trace{}, models.Errorf(models.CodeNotFound, "Run %s has no trace.", runID)
		}
		if err != nil {
			return Trace{}, fmt.Errorf("traces: open: %w", err)
		}
		return Trace{File: pick, Body: body}, nil
	}
}
