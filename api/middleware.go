package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"holdco/logging"
	"holdco/models"
)

const requestIDHeader = "X-Request-Id"

// requestContext puts what the request's handlers and hooks read into its
// context, in one copy of the request: the error hooks' sink
// (withErrorSink) and the request id. The id is a caller's X-Request-Id
// when it is short and plain, otherwise a minted one; it is echoed on the
// response, and every log line of the request carries it.
func requestContext(sink *errorSink) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request = withRequestValues(c.Writer, c.Request, sink)
		c.Next()
	}
}

// withRequestValues is requestContext's work: r with the sink and the
// request id in its context, the id on w.
func withRequestValues(w http.ResponseWriter, r *http.Request, sink *errorSink) *http.Request {
	id := r.Header.Get(requestIDHeader)
	if !validRequestID(id) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header()[requestIDHeader] = []string{id}
	return r.WithContext(logging.WithRequestID(withErrorSink(r.Context(), sink), id))
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// accessLog writes one line per request: the route template and the ids
// in the path, never the path itself (a document type, an unknown route's
// path are text a caller typed) nor the query string (some routes carry
// tokens there).
func accessLog(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		logAccess(logger, c.Request, c.FullPath(), c.Params, c.Writer.Status(), c.Writer.Size(), start)
	}
}

// accessLevel is the level of a request's line: debug for the paths
// polled constantly by probes and posted by every visitor's browser.
func accessLevel(r *http.Request) slog.Level {
	if p := r.URL.Path; p == "/health" || strings.HasPrefix(p, "/analytics/") {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// logAccess writes accessLog's line (route "" is an unmatched request).
func logAccess(logger *slog.Logger, r *http.Request, route string, params gin.Params, status, size int, start time.Time) {
	level := accessLevel(r)
	if !logger.Enabled(r.Context(), level) {
		return
	}
	if route == "" {
		route = "(unmatched)"
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("route", route)}
	for _, p := range params {
		if _, err := uuid.Parse(p.Value); err == nil && len(p.Value) == 36 {
			attrs = append(attrs, slog.String(p.Key, p.Value))
		}
	}
	attrs = append(attrs, slog.Int("status", status), slog.Int("bytes", size), slog.Duration("duration", time.Since(start)))
	logger.LogAttrs(r.Context(), level, "http request", attrs...)
}

// recoverPanics answers 500 in the common error shape and logs the panic.
func recoverPanics(logger *slog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, rec any) {
		logPanic(logger, c.Request, c.FullPath(), rec)
		if !c.Writer.Written() {
			writeError(c.Writer, models.CodeInternal, "An unexpected error occurred; it has been logged.")
		}
		c.Abort()
	})
}

func logPanic(logger *slog.Logger, r *http.Request, route string, rec any) {
	logger.ErrorContext(r.Context(), "panic while serving request", "panic", fmt.Sprint(rec), "route", route)
}

// keepReadDeadline hands huma a response writer whose SetReadDeadline
// does nothing. huma bounds the reading of an operation's body by moving
// the connection's read deadline 5 s ahead (Operation.BodyReadTimeout)
// and never moves it back: when the handler was still working at that
// deadline (a message waiting for an unreachable Temporal, a message
// waiting for the ended turn's workflow to close), net/http's background
// read of the kept-alive connection failed, which cancels the
// connection's context, and every later request on that connection
// failed at once with "context canceled" (500), until the client dropped
// it (golang/go#70834). The connection keeps the server's own deadline,
// HOLDCO_HTTP_READ_TIMEOUT from the request's first byte, which bounds a
// slow body as documented (docs/reliability.md, Bounds).
func keepReadDeadline() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Writer = noReadDeadline{c.Writer}
		c.Next()
	}
}

// noReadDeadline is gin's response writer without read deadlines; Unwrap
// still reaches the connection for http.ResponseController (full duplex
// uploads).
type noReadDeadline struct{ gin.ResponseWriter }

func (noReadDeadline) SetReadDeadline(time.Time) error { return nil }

func (w noReadDeadline) Unwrap() http.ResponseWriter { return w.ResponseWriter }
