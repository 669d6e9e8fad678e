package api

import (
	"log/slog"
	"net/http"
	"time"

	"holdco/models"
	"holdco/observability"
)

// Routes served ahead of gin. Analytics capture is posted by every
// visitor's browser of every company's site, many times the rest of the
// API together, and takes no parameters from its path: the router answers
// it without gin's context and handler chain (router.go). It gets the same
// middleware as every route, in one function (direct): the route label,
// the request id and error sink, recovery and the access log. The routes
// stay registered with gin too, for the OpenAPI document and the answers
// to other methods (405).

// direct serves h as the route template route, with the router's
// middleware: what recordRoute, requestContext, accessLog and
// recoverPanics do for a gin route.
func direct(logger *slog.Logger, sink *errorSink, route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		observability.SetRoute(w, route)
		r = withRequestValues(w, r, sink)
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				logPanic(logger, r, route, rec)
				if tw.status == 0 {
					writeError(tw, models.CodeInternal, "An unexpected error occurred; it has been logged.")
				}
			}
			status := tw.status
			if status == 0 {
				status = http.StatusOK
			}
			logAccess(logger, r, route, nil, status, tw.size, start)
		}()
		h(tw, r)
	}
}

// trackingWriter remembers the status and the bytes written, for the
// access log and for recovery (a handler that has answered gets no 500).
type trackingWriter struct {
	http.ResponseWriter
	status, size int
}

func (w *trackingWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.size += n
	return n, err
}

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
