package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// slogLogger adapts the Temporal server's logger interface to slog.
type slogLogger struct {
	log   *slog.Logger
	level *slog.LevelVar
	// building is true while the server is being built: a Fatal then
	// (a service's gRPC listener that cannot bind its port; Temporal's
	// own logger would exit the process) panics with a buildFatal, which
	// the build turns into its error. Otherwise Fatal logs at error.
	building *atomic.Bool
}

var _ log.Logger = slogLogger{}

func (s slogLogger) Debug(msg string, tags ...tag.Tag) { s.emit(slog.LevelDebug, msg, tags) }
func (s slogLogger) Info(msg string, tags ...tag.Tag)  { s.emit(slog.LevelInfo, msg, tags) }
func (s slogLogger) Warn(msg string, tags ...tag.Tag)  { s.emit(slog.LevelWarn, msg, tags) }
func (s slogLogger) Error(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }
func (s slogLogger) DPanic(msg string, tags ...tag.Tag) {
	s.emit(slog.LevelError, msg, tags)
}
func (s slogLogger) Panic(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }
func (s slogLogger) Fatal(msg string, tags ...tag.Tag) {
	s.emit(slog.LevelError, msg, tags)
	if s.building != nil && s.building.Load() {
		f := buildFatal(msg)
		for _, t := range tags {
			f += buildFatal(fmt.Sprintf(" %s=%v", t.Key(), t.Value()))
		}
		panic(f)
	}
}

// buildFatal is a Fatal logged while the server was being built: its
// message and tags (an error tag carries only its text).
type buildFatal string

func (f buildFatal) Error() string { return string(f) }

func (s slogLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	if level < s.level.Level() || !s.log.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}
