package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"holdco/models"
)

// statusByCode is the one table from domain error codes to HTTP statuses.
// Codes missing here answer 500. Two mappings do not go by code alone: any
// error wrapping models.ErrUnavailable (the store's verdict on a database
// it cannot reach, for either driver) answers 503 upstream_unavailable
// with Retry-After (unavailable below), whatever wraps it; an
// upstream_unavailable that carries retry_after_seconds (a dependency down
// for now, the request safe to send again: a workflow Temporal did not start)
// answers 503 with that Retry-After (fromDomain).
var statusByCode = map[models.ErrorCode]int{
	models.CodeBadRequest:           http.StatusBadRequest,
	models.CodeIdeaNotAllowed:       http.StatusBadRequest,
	models.CodeUnauthenticated:      http.StatusUnauthorized,
	models.CodeInsufficientCredits:  http.StatusPaymentRequired,
	models.CodePaymentRequired:      http.StatusPaymentRequired,
	models.CodePlanExpired:          http.StatusPaymentRequired,
	models.CodeForbidden:            http.StatusForbidden,
	models.CodePlanBlocked:          http.StatusForbidden,
	models.CodePlanNoAI:             http.StatusForbidden,
	models.CodeBusinessLimitReached: http.StatusForbidden,
	models.CodeNotFound:             http.StatusNotFound,
	models.CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	models.CodeNotAcceptable:        http.StatusNotAcceptable,
	models.CodeConflict:             http.StatusConflict,
	models.CodeHandleTaken:          http.StatusConflict,
	models.CodeBusinessNotActive:    http.StatusConflict,
	models.CodeTooLarge:             http.StatusRequestEntityTooLarge,
	models.CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	models.CodeInvalidArgument:      http.StatusUnprocessableEntity,
	models.CodeRateLimited:          http.StatusTooManyRequests,
	models.CodeInternal:             http.StatusInternalServerError,
	models.CodeToolFailed:           http.StatusBadGateway,
	models.CodeUpstreamUnavailable:  http.StatusBadGateway,
}

// codeByStatus names the errors huma and gin raise themselves.
var codeByStatus = map[int]models.ErrorCode{
	http.StatusBadRequest:            models.CodeBadRequest,
	http.StatusUnauthorized:          models.CodeUnauthenticated,
	http.StatusForbidden:             models.CodeForbidden,
	http.StatusNotFound:              models.CodeNotFound,
	http.StatusMethodNotAllowed:      models.CodeMethodNotAllowed,
	http.StatusNotAcceptable:         models.CodeNotAcceptable,
	http.StatusConflict:              models.CodeConflict,
	http.StatusRequestEntityTooLarge: models.CodeTooLarge,
	http.StatusUnsupportedMediaType:  models.CodeUnsupportedMediaType,
	http.StatusTooManyRequests:       models.CodeRateLimited,
	http.StatusBadGateway:            models.CodeUpstreamUnavailable,
	http.StatusServiceUnavailable:    models.CodeUpstreamUnavailable,
}

// StatusOf returns the HTTP status for a domain error code.
func StatusOf(code models.ErrorCode) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// processWide holds the settings that belong to the process, not to a
// router: huma's error constructors are package-level variables and gin's
// mode is global, so they are set once however many routers are built
// (tests build many, in parallel).
var processWide sync.Once

func configureProcessWide() {
	processWide.Do(func() {
		gin.SetMode(gin.ReleaseMode)
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return newError(nil, status, msg, errs...)
		}
		huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			return newError(ctx, status, msg, errs...)
		}
	})
}

// errorLoggerKey carries the router's error sink in each request's
// context: the error hooks are process-wide, the logger of unexpected
// (5xx) errors and the outage record are the serving router's.
type errorLoggerKey struct{}

// errorSink is where a router's error hooks report.
type errorSink struct {
	logger *slog.Logger
	outage *outageLog
}

// newErrorSink is a router's sink: logger and the router's outage record,
// put in every request's context for the error hooks (requestContext).
func newErrorSink(logger *slog.Logger) *errorSink {
	return &errorSink{logger: logger, outage: &outageLog{}}
}

// withErrorSink is ctx with the error hooks' sink.
func withErrorSink(ctx context.Context, sink *errorSink) context.Context {
	return context.WithValue(ctx, errorLoggerKey{}, sink)
}

// sinkOf is the serving router's error sink; slog.Default() and a
// process-wide outage record outside a request (huma.NewError without a
// context).
func sinkOf(ctx context.Context) *errorSink {
	if ctx != nil {
		if s, ok := ctx.Value(errorLoggerKey{}).(*errorSink); ok {
			return s
		}
	}
	return &errorSink{logger: slog.Default(), outage: &defaultOutage}
}

var defaultOutage outageLog

// errorLogger is the serving router's logger; slog.Default() for an error
// raised outside a request (huma.NewError without a context).
func errorLogger(ctx huma.Context) *slog.Logger {
	if ctx == nil {
		return slog.Default()
	}
	return sinkOf(ctx.Context()).logger
}

// Database outages. A request that meets one answers 503 with
// Retry-After; the router logs one line when the outage begins and one
// when no request has met it for outageQuiet, not one per request.
const (
	outageRetryAfter = 5 // seconds
	outageQuiet      = 10 * time.Second
)

type outageLog struct {
	mu          sync.Mutex
	since, last time.Time
	refused     int64
}

// note records a request refused for an outage, logging its start.
func (o *outageLog) note(logger *slog.Logger, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.last = now
	o.refused++
	if !o.since.IsZero() {
		return
	}
	o.since, o.refused = now, 1
	logger.Error("database unavailable: requests answer 503 with Retry-After until it is back", "error", err)
	go o.watch(logger)
}

// watch logs the outage's end once no request has met it for
// outageQuiet.
func (o *outageLog) watch(logger *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		o.mu.Lock()
		if time.Since(o.last) >= outageQuiet {
			logger.Info("database outage over: no request met it for "+outageQuiet.String(), "lasted", o.last.Sub(o.since).Round(time.Millisecond).String(),
				"requests_refused", o.refused)
			o.since = time.Time{}
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
	}
}

// unavailable is the answer to a request that met a database outage.
func unavailable(ctx context.Context, err error) *models.ErrorBody {
	sink := sinkOf(ctx)
	sink.outage.note(sink.logger, err)
	return &models.ErrorBody{Status: http.StatusServiceUnavailable, Code: string(models.CodeUpstreamUnavailable),
		Detail: "The database cannot be reached right now; retry in " + strconv.Itoa(outageRetryAfter) + " seconds."}
}

// unavailableHuma answers an outage on a huma operation, with its
// Retry-After.
func unavailableHuma(ctx huma.Context, err error) huma.StatusError {
	var c context.Context
	if ctx != nil {
		c = ctx.Context()
		ctx.SetHeader("Retry-After", strconv.Itoa(outageRetryAfter))
	}
	return unavailable(c, err)
}

// newError turns whatever huma reports (its own validation failures, or the
// error a handler returned) into the two public shapes.
func newError(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	for _, err := range errs {
		if errors.Is(err, models.ErrUnavailable) {
			return unavailableHuma(ctx, err)
		}
	}
	for _, err := range errs {
		var de *models.Error
		if errors.As(err, &de) {
			return fromDomain(ctx, de)
		}
		var ve *HTTPValidationError
		if errors.As(err, &ve) {
			return ve // already in its public shape (the edge check)
		}
	}
	if isValidationFailure(status, msg) {
		return fromHumaValidation(status, msg, errs)
	}
	code, ok := codeByStatus[status]
	if !ok {
		code = models.CodeInternal
		if status < 500 && status != 0 {
			code = models.CodeBadRequest
		}
	}
	if status >= 500 || status == 0 && len(errs) > 0 {
		logUnexpected(ctx, msg, errs)
		msg = "An unexpected error occurred; it has been logged. Retry, and contact support with the X-Request-Id if it persists."
	}
	if status == http.StatusUnauthorized && ctx != nil {
		ctx.SetHeader("WWW-Authenticate", `Bearer`)
	}
	return &models.ErrorBody{Status: status, Code: string(code), Detail: sentence(msg)}
}

func fromDomain(ctx huma.Context, de *models.Error) huma.StatusError {
	if errors.Is(de, models.ErrUnavailable) {
		return unavailableHuma(ctx, de)
	}
	status := StatusOf(de.Code)
	if de.Code == models.CodeInvalidArgument {
		return &HTTPValidationError{Detail: []ValidationError{{Loc: fieldLocation(ctx, de.Field), Msg: de.Detail, Type: "value_error"}}}
	}
	retryAfter, retry := de.Extra["retry_after_seconds"].(int64)
	switch {
	case retry && de.Code == models.CodeUpstreamUnavailable:
		// A dependency that is down for now and a request that may be
		// sent again as it is (a workflow Temporal did not start): 503 with
		// Retry-After, logged as a warning, not as a failure of holdco.
		status = http.StatusServiceUnavailable
		if ctx != nil {
			errorLogger(ctx).WarnContext(ctx.Context(), "request refused: "+de.Detail, "error", error(de))
		}
	case status >= 500:
		logUnexpected(ctx, de.Detail, []error{de})
	}
	if status == http.StatusUnauthorized && ctx != nil {
		ctx.SetHeader("WWW-Authenticate", `Bearer`)
	}
	if retry && (de.Code == models.CodeRateLimited || de.Code == models.CodeUpstreamUnavailable) && ctx != nil {
		ctx.SetHeader("Retry-After", strconv.FormatInt(max(retryAfter, 1), 10))
	}
	body := models.BodyOf(de)
	body.Status = status
	return body
}

// fieldLocation places a field named by a service rule: a parameter of the
// operation (query, path or header) under its kind, anything else in the
// body. Services name fields as clients send them and know nothing of HTTP;
// the operation knows where each input came from.
func fieldLocation(ctx huma.Context, field string) []any {
	if field == "" {
		return []any{"body"}
	}
	if ctx != nil {
		if op := ctx.Operation(); op != nil {
			for _, p := range op.Parameters {
				switch {
				case p.In == "header" && strings.EqualFold(p.Name, field):
					return []any{"header", p.Name}
				case (p.In == "query" || p.In == "path") && p.Name == field:
					return []any{p.In, p.Name}
				}
			}
		}
	}
	return append([]any{"body"}, parseLocation(field)...)
}

func logUnexpected(ctx huma.Context, msg string, errs []error) {
	logger := errorLogger(ctx)
	attrs := []any{"error", errors.Join(errs...)}
	if ctx != nil {
		logger.ErrorContext(ctx.Context(), "request failed: "+msg, attrs...)
		return
	}
	logger.Error("request failed: "+msg, attrs...)
}

func sentence(msg string) string {
	if msg == "" {
		return "Request failed."
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// writeError renders err on a plain net/http path (gin's 404/405, panics).
func writeError(w http.ResponseWriter, code models.ErrorCode, detail string) {
	body := &models.ErrorBody{Status: StatusOf(code), Code: string(code), Detail: detail}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(body.Status)
	_, _ = w.Write(b)
}
