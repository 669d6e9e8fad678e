// Package llm holds what the language model adapters share: the
// classification of a failed call into a models.ModelCallError. The adapters
// live in the packages below it, each with a Complete method of the same
// shape (see models/llm.go and docs/llm.md):
//
//   - anthropic: the Anthropic Messages API through the official SDK.
//   - openai: OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM…)
//     through the official SDK.
//   - scripted: the embedded default, a deterministic offline model that
//     really calls tools.
//
// No adapter retries: the SDKs' retries are off and every failure is
// returned once, classified, for the caller's retry policy to decide.
package llm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"holdco/models"
)

// maxDetail bounds the provider's message kept in an error: enough to
// diagnose, too short to carry a conversation along.
const maxDetail = 300

// StatusError classifies an HTTP error answer of a provider. errType is the
// provider's error type or code (rate_limit_error, overloaded_error,
// context_length_exceeded…), message its sentence; secret (the API key) is
// scrubbed from the detail.
func StatusError(status int, header http.Header, errType, message, secret string) *models.ModelCallError {
	e := &models.ModelCallError{Status: status, Detail: detail(errType, message, secret)}
	switch {
	case isContextTooLong(errType, message):
		e.Kind = models.ModelContextTooLong
	case status == http.StatusTooManyRequests && errType == "insufficient_quota":
		// The account is out of money: waiting does not help.
		e.Kind = models.ModelAuth
	case status == http.StatusTooManyRequests || errType == "rate_limit_error":
		e.Kind, e.Retryable = models.ModelRateLimited, true
		e.RetryAfter = RetryAfter(header, time.Now())
	case status == 529 || errType == "overloaded_error":
		e.Kind, e.Retryable = models.ModelOverloaded, true
		e.RetryAfter = RetryAfter(header, time.Now())
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		errType == "authentication_error" || errType == "permission_error":
		e.Kind = models.ModelAuth
		e.Detail = detail(errType, "", "") // providers echo parts of a wrong key
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout || errType == "timeout_error":
		e.Kind, e.Retryable = models.ModelTimeout, true
	case status >= 500 || status == 0 || errType == "api_error" || errType == "server_error":
		e.Kind, e.Retryable = models.ModelUnavailable, true
		e.RetryAfter = RetryAfter(header, time.Now())
	case status == http.StatusRequestEntityTooLarge:
		e.Kind = models.ModelContextTooLong
	default: // 400, 404, 409, 422: the request is wrong, sending it again fails again
		e.Kind = models.ModelInvalidRequest
	}
	return e
}

// TransportError classifies a failure without a usable HTTP answer: the
// call's context ended, the connection broke, or the stream was cut.
func TransportError(ctx context.Context, err error) *models.ModelCallError {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &models.ModelCallError{Kind: models.ModelTimeout, Retryable: true, Detail: "no complete answer before the deadline"}
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return &models.ModelCallError{Kind: models.ModelCanceled, Detail: "the call was canceled"}
	}
	return &models.ModelCallError{Kind: models.ModelUnavailable, Retryable: true, Detail: "connection failed or the stream broke"}
}

// RetryAfter reads retry-after-ms, then retry-after (seconds or an HTTP
// date); 0 when absent or unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func isContextTooLong(errType, message string) bool {
	m := strings.ToLower(message)
	return errType == "context_length_exceeded" || strings.Contains(m, "prompt is too long") ||
		strings.Contains(m, "context length") || strings.Contains(m, "context window")
}

func detail(errType, message, secret string) string {
	if secret != "" {
		message = strings.ReplaceAll(message, secret, "[key]")
	}
	message = strings.Join(strings.Fields(message), " ")
	if len(message) > maxDetail {
		message = message[:maxDetail] + "…"
	}
	switch {
	case errType == "":
		return message
	case message == "":
		return errType
	}
	return errType + ": " + message
}
