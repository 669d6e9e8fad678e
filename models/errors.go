package models

import (
	"errors"
	"fmt"
)

// ErrorCode names a failure case. The same codes are the connector's `error`
// values and, through one table in api/, pick the REST status.
type ErrorCode string

const (
	CodeInvalidArgument      ErrorCode = "invalid_argument"
	CodeUnauthenticated      ErrorCode = "unauthenticated"
	CodeForbidden            ErrorCode = "forbidden"
	CodeNotFound             ErrorCode = "not_found"
	CodeConflict             ErrorCode = "conflict"
	CodeRateLimited          ErrorCode = "rate_limited"
	CodeTooLarge             ErrorCode = "too_large"
	CodeInsufficientCredits  ErrorCode = "insufficient_credits"
	CodePlanBlocked          ErrorCode = "plan_blocked"
	CodePlanExpired          ErrorCode = "plan_expired"
	CodePlanNoAI             ErrorCode = "plan_no_ai"
	CodePaymentRequired      ErrorCode = "payment_required"
	CodeBusinessLimitReached ErrorCode = "business_limit_reached"
	CodeIdeaNotAllowed       ErrorCode = "idea_not_allowed"
	CodeHandleTaken          ErrorCode = "handle_taken"
	CodeBusinessNotActive    ErrorCode = "business_not_active"
	CodeToolFailed           ErrorCode = "tool_failed"
	CodeUpstreamUnavailable  ErrorCode = "upstream_unavailable"
	CodeInternal             ErrorCode = "internal_error"
)

// Error is the domain error every layer returns. Detail is a sentence that can
// be shown to a user as it is; Extra carries case-specific fields (for example
// suggested_handle or the numbers of insufficient_credits) that are rendered
// beside error and detail.
type Error struct {
	Code   ErrorCode
	Detail string
	Field  string
	Extra  map[string]any
	Err    error // cause, never rendered to clients
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted detail sentence.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// WithField returns a copy of e naming the offending input field
// (invalid_argument). e itself is not changed, so a value shared between
// requests can never be decorated by two of them at once.
func (e *Error) WithField(field string) *Error {
	c := e.clone()
	c.Field = field
	return c
}

// With returns a copy of e with a case-specific field rendered next to
// error and detail; e itself is not changed.
func (e *Error) With(key string, value any) *Error {
	c := e.clone()
	c.Extra[key] = value
	return c
}

// Wrap returns a copy of e recording the underlying cause for logs; e
// itself is not changed.
func (e *Error) Wrap(err error) *Error {
	c := e.clone()
	c.Err = err
	return c
}

// clone copies e with its own Extra map.
func (e *Error) clone() *Error {
	c := *e
	c.Extra = make(map[string]any, len(e.Extra)+1)
	for k, v := range e.Extra {
		c.Extra[k] = v
	}
	return &c
}

// ErrorCodeOf returns the code of err, or CodeInternal when err is not a
// domain error.
func ErrorCodeOf(err error) ErrorCode {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	return CodeInternal
}

// IsCode reports whether err is a domain error with the given code.
func IsCode(err error, code ErrorCode) bool {
	var de *Error
	return errors.As(err, &de) && de.Code == code
}

// Sentinel errors the store returns; service/ turns them into user-facing
// domain errors with a proper detail.
var (
	ErrNotFound  = errors.New("record not found")
	ErrDuplicate = errors.New("duplicate key")
	// ErrUnavailable is a database that cannot be reached or used right
	// now (connection refused or lost, server shutting down, SQLite busy
	// past its timeout or unable to open its file): the request may
	// succeed later. REST answers it 503 with Retry-After (api/errors.go).
	ErrUnavailable = errors.New("database unavailable")
)

// Codes that only the REST adapter produces for protocol-level failures.
const (
	CodeBadRequest           ErrorCode = "bad_request"
	CodeMethodNotAllowed     ErrorCode = "method_not_allowed"
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	CodeNotAcceptable        ErrorCode = "not_acceptable"
)
