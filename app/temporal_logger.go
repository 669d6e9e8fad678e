package app

import (
	"context"
	"log/slog"
	"strings"

	sdklog "go.temporal.io/sdk/log"
)

// TemporalLogger is the Temporal SDK's logger of holdco's processes: l,
// with component=temporal-sdk, except for one line. When a worker stops
// (SIGTERM, a deploy) while an activity runs, the SDK visits the
// activity's result with the worker's own context, which the stop has
// cancelled, and logs "Activity task postprocess error: context
// canceled" at ERROR (SDK v1.50 and v1.51). That is the stop's expected
// outcome, not a failure of holdco: the activity is reported failed and
// the server retries it on another worker. It is logged as a warning.
func TemporalLogger(l *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(stopNoise{l.With("component", "temporal-sdk").Handler()}))
}

// stopNoise lowers the SDK's error about a result visited after the
// worker's stop to a warning.
type stopNoise struct{ slog.Handler }

func (h stopNoise) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && strings.HasPrefix(r.Message, "Activity task postprocess error: ") &&
		strings.HasSuffix(r.Message, context.Canceled.Error()) {
		r.Level = slog.LevelWarn
	}
	return h.Handler.Handle(ctx, r)
}

func (h stopNoise) Enabled(ctx context.Context, level slog.Level) bool {
	// An error that may become a warning is let through when warnings are.
	if level >= slog.LevelError {
		return h.Handler.Enabled(ctx, level) || h.Handler.Enabled(ctx, slog.LevelWarn)
	}
	return h.Handler.Enabled(ctx, level)
}

func (h stopNoise) WithAttrs(attrs []slog.Attr) slog.Handler {
	return stopNoise{h.Handler.WithAttrs(attrs)}
}

func (h stopNoise) WithGroup(name string) slog.Handler { return stopNoise{h.Handler.WithGroup(name)} }
