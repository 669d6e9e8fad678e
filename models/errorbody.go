package models

import "encoding/json"

// ErrorBody is the wire shape of every error except validation failures:
// {"error": code, "detail": sentence, "field"?: name, ...case fields}. REST
// answers it and the connector returns the same object for a refused tool
// call, so it lives here rather than in either adapter.
type ErrorBody struct {
	// Status is the HTTP status the REST adapter answers with; it is not
	// part of the body.
	Status int            `json:"-"`
	Code   string         `json:"error" doc:"Machine-readable error case, e.g. not_found, forbidden, insufficient_credits." example:"not_found"`
	Detail string         `json:"detail" doc:"A sentence that can be shown to the user." example:"Company 0b7c… does not exist."`
	Field  string         `json:"field,omitempty" doc:"The offending input, when known."`
	Extra  map[string]any `json:"-"`
	_      struct{}       `additionalProperties:"true"` // case fields such as suggested_handle
}

// BodyOf is the wire body of a domain error (without a status: the
// adapter picks it).
func BodyOf(e *Error) *ErrorBody {
	return &ErrorBody{Code: string(e.Code), Detail: e.Detail, Field: e.Field, Extra: e.Extra}
}

func (e *ErrorBody) Error() string { return e.Code + ": " + e.Detail }

// GetStatus is the HTTP status (huma's StatusError).
func (e *ErrorBody) GetStatus() int { return e.Status }

// MarshalJSON flattens the case-specific fields next to error and detail.
func (e *ErrorBody) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Extra)+3)
	for k, v := range e.Extra {
		m[k] = v
	}
	m["error"] = e.Code
	m["detail"] = e.Detail
	if e.Field != "" {
		m["field"] = e.Field
	}
	return json.Marshal(m)
}
