package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// ValidationError is one failed rule, as FastAPI reports it.
type ValidationError struct {
	Loc  []any  `json:"loc" doc:"Where the failure is: body, query, path or header, then field names and array indexes." example:"[\"body\",\"name\"]"`
	Msg  string `json:"msg" doc:"What is wrong." example:"Field required"`
	Type string `json:"type" doc:"Failure kind, e.g. missing, string_too_short, json_invalid." example:"missing"`
}

// HTTPValidationError is the 422 body of every validation failure.
type HTTPValidationError struct {
	Detail []ValidationError `json:"detail"`
}

func (e *HTTPValidationError) Error() string {
	parts := make([]string, len(e.Detail))
	for i, d := range e.Detail {
		parts[i] = fmt.Sprintf("%v: %s", d.Loc, d.Msg)
	}
	return "validation failed: " + strings.Join(parts, "; ")
}

func (e *HTTPValidationError) GetStatus() int { return http.StatusUnprocessableEntity }

func isValidationFailure(status int, msg string) bool {
	switch {
	case status == http.StatusUnprocessableEntity:
		return true
	case status == http.StatusBadRequest && msg == "request body is required":
		return true
	case (status == http.StatusBadRequest || status == http.StatusUnsupportedMediaType) && msg == "validation failed":
		// unparseable body or a body that is not JSON
		return true
	}
	return false
}

func fromHumaValidation(status int, msg string, errs []error) *HTTPValidationError {
	out := &HTTPValidationError{}
	if msg == "request body is required" {
		out.Detail = append(out.Detail, ValidationError{Loc: []any{"body"}, Msg: "Field required", Type: "missing"})
		return out
	}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var ed huma.ErrorDetailer
		if !errors.As(err, &ed) {
			out.Detail = append(out.Detail, ValidationError{Loc: []any{"body"}, Msg: err.Error(), Type: "value_error"})
			continue
		}
		d := ed.ErrorDetail()
		loc := parseLocation(d.Location)
		if len(loc) == 0 {
			loc = []any{"body"}
		}
		v := ValidationError{Loc: loc, Msg: d.Message}
		switch {
		case status == http.StatusUnsupportedMediaType:
			v.Type, v.Msg = "content_type", "Body must be JSON (Content-Type: application/json)"
		case d.Location == "body" && strings.HasPrefix(d.Message, "json: cannot unmarshal"):
			v.Loc, v.Type, v.Msg = unmarshalFailure(d.Message)
		case status == http.StatusBadRequest && d.Location == "body":
			v.Type, v.Msg = "json_invalid", "JSON decode error: "+d.Message
		default:
			v.Type, v.Msg, v.Loc = classify(d.Message, loc)
		}
		out.Detail = append(out.Detail, v)
	}
	if len(out.Detail) == 0 {
		out.Detail = append(out.Detail, ValidationError{Loc: []any{"body"}, Msg: sentence(msg), Type: "value_error"})
	}
	return out
}

// classify gives huma's messages FastAPI's error types (and moves a missing
// property's name into the location, as FastAPI does).
func classify(msg string, loc []any) (typ, text string, outLoc []any) {
	has := func(p string) bool { return strings.HasPrefix(msg, p) }
	switch {
	case has("expected required property "):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "expected required property "), " to be present")
		return "missing", "Field required", append(loc, name)
	case has("required ") && strings.Contains(msg, "is missing"):
		return "missing", "Field required", loc
	case has("unexpected property"):
		return "extra_forbidden", "Extra inputs are not permitted", loc
	case has("expected length >="):
		return "string_too_short", msg, loc
	case has("expected length <="):
		return "string_too_long", msg, loc
	case has("expected array length >="):
		return "too_short", msg, loc
	case has("expected array length <="):
		return "too_long", msg, loc
	case has("expected number >="):
		return "greater_than_equal", msg, loc
	case has("expected number >"):
		return "greater_than", msg, loc
	case has("expected number <="):
		return "less_than_equal", msg, loc
	case has("expected number <"):
		return "less_than", msg, loc
	case has("expected number to be a multiple"):
		return "multiple_of", msg, loc
	case has("expected value to be one of"):
		return "enum", msg, loc
	case has("expected string to match pattern"):
		return "string_pattern_mismatch", msg, loc
	case has("expected string to be RFC 3339 date-time"):
		return "datetime_parsing", msg, loc
	case has("expected string to be RFC 4122 uuid"):
		return "uuid_parsing", msg, loc
	case has("expected string to be RFC 3986 uri"):
		return "url_parsing", msg, loc
	case has("expected string to be"):
		return "value_error", msg, loc
	case msg == "expected string":
		return "string_type", "Input should be a valid string", loc
	case msg == "expected integer", msg == "invalid integer":
		return "int_parsing", "Input should be a valid integer", loc
	case msg == "expected number", has("invalid float"):
		return "float_parsing", "Input should be a valid number", loc
	case msg == "expected boolean", msg == "invalid boolean":
		return "bool_parsing", "Input should be a valid boolean", loc
	case msg == "expected object":
		return "model_attributes_type", "Input should be a valid object", loc
	case msg == "expected array":
		return "list_type", "Input should be a valid list", loc
	}
	return "value_error", msg, loc
}

// parseLocation turns "body.items[3].name" into ["body","items",3,"name"].
func parseLocation(s string) []any {
	var out []any
	for _, part := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				break
			}
			if n, err := strconv.Atoi(idx); err == nil {
				out = append(out, n)
			} else {
				out = append(out, idx)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// unmarshalFailure rewords encoding/json's type error, which names Go types
// ("cannot unmarshal number 1e30 into Go struct field T.a.b of type int"),
// as FastAPI would: the field's location and the kind of value it takes.
func unmarshalFailure(msg string) (loc []any, typ, text string) {
	loc = []any{"body"}
	rest := msg
	if _, after, ok := strings.Cut(msg, " into Go struct field "); ok {
		field, _, _ := strings.Cut(after, " of type ")
		if _, path, ok := strings.Cut(field, "."); ok {
			loc = append(loc, parseLocation(path)...)
		}
	}
	_, goType, _ := strings.Cut(rest, " of type ")
	goType = strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return loc, "int_parsing", "Input should be a valid integer"
	case strings.HasPrefix(goType, "float"):
		return loc, "float_parsing", "Input should be a valid number"
	case goType == "string":
		return loc, "string_type", "Input should be a valid string"
	case goType == "bool":
		return loc, "bool_parsing", "Input should be a valid boolean"
	}
	return loc, "value_error", "Input is not valid for this field"
}
