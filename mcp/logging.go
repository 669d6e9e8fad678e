package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// The connector logs at most one line per request, at DEBUG (accessLog):
// the SDK's own lines about each stateless request's short-lived session
// are dropped and its other informational lines lowered to DEBUG
// (sdkLogHandler), and a client that goes away mid-request is not a
// failure of holdco's (logFailure).

// sdkLifecycle are the SDK's lines about the session every stateless
// request opens and closes: three a request, nothing an operator needs.
var sdkLifecycle = map[string]bool{
	"server connecting":           true,
	"server session connected":    true,
	"server session disconnected": true,
	"session initialized":         true,
	"server session ended":        true,
}

// sdkLogHandler is the SDK's logger: lifecycle lines dropped, lines below
// WARN lowered to DEBUG, and errors that only say the client went away
// (a cancelled context, a closed connection) lowered to DEBUG.
type sdkLogHandler struct{ next slog.Handler }

func (h sdkLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	if level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	return h.next.Enabled(ctx, level)
}

func (h sdkLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sdkLifecycle[r.Message] {
		return nil
	}
	switch {
	case r.Level < slog.LevelWarn:
		r.Level = slog.LevelDebug
	case ctx.Err() != nil || clientGone(r):
		r.Level = slog.LevelDebug
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h sdkLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sdkLogHandler{h.next.WithAttrs(attrs)}
}

func (h sdkLogHandler) WithGroup(name string) slog.Handler {
	return sdkLogHandler{h.next.WithGroup(name)}
}

// clientGone reports whether a record is about a client that went away.
func clientGone(r slog.Record) bool {
	gone := disconnectText(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && disconnected(err) {
			gone = true
		} else if disconnectText(a.Value.String()) {
			gone = true
		}
		return !gone
	})
	return gone
}

// disconnected reports whether err says the client went away.
func disconnected(err error) bool {
	return errors.Is(err, context.Canceled) || disconnectText(err.Error())
}

func disconnectText(s string) bool {
	for _, m := range []string{"context canceled", "broken pipe", "connection reset by peer", "use of closed network connection", "client disconnected"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// logFailure logs a failure on holdco's side at ERROR — unless the
// request's client went away (its context ended, or the error says so):
// that is logged at DEBUG, as nothing failed on holdco's side.
func (h *handler) logFailure(ctx context.Context, msg string, err error, args ...any) {
	level := slog.LevelError
	if ctx.Err() != nil || err != nil && disconnected(err) {
		level = slog.LevelDebug
		args = append(args, "client_disconnected", true)
	}
	h.logger.Log(ctx, level, msg, append(args, "error", err)...)
}

// accessLog writes one DEBUG line per request to the connector: the MCP
// method and name the client declared, the status and the duration.
func accessLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !logger.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		args := []any{"http_method", r.Method, "mcp_method", r.Header.Get("Mcp-Method"), "status", sw.status,
			"duration_ms", time.Since(start).Milliseconds()}
		if name := r.Header.Get("Mcp-Name"); name != "" {
			args = append(args, "mcp_name", name)
		}
		logger.DebugContext(r.Context(), "connector request", args...)
	})
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.wrote = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
