package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ClientHeaders are header parameters shared by routes through embedding.
type ClientHeaders struct {
	Mobile  string `header:"X-Client-Mobile" enum:"true,false,1,0"`
	Session string `header:"X-Analytics-Session-Id" maxLength:"8" pattern:"^[!-~]*$"`
}

type embeddedHeadersInput struct {
	ClientHeaders
	ID string `path:"id"`
}

// TestEmbeddedHeaderSchemasAreEnforced: a header declared in an embedded
// struct keeps its enum, pattern and length (huma alone skips them).
func TestEmbeddedHeaderSchemasAreEnforced(t *testing.T) {
	r := newTestRouter(t, nil)
	var got *embeddedHeadersInput
	huma.Register(r.API, huma.Operation{OperationID: "get-gadget", Method: http.MethodGet, Path: "/gadgets/{id}"},
		func(_ context.Context, in *embeddedHeadersInput) (*struct{}, error) { got = in; return nil, nil })
	cases := []struct{ header, value, typ string }{
		{"X-Client-Mobile", "maybe", "enum"},
		{"X-Analytics-Session-Id", "a b", "string_pattern_mismatch"},
		{"X-Analytics-Session-Id", "123456789", "string_too_long"},
	}
	for _, c := range cases {
		got = nil
		rec, body := do(t, r, http.MethodGet, "/gadgets/g1", "", c.header, c.value)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", c.header, rec.Body.String())
		d := body["detail"].([]any)[0].(map[string]any)
		assert.Equal(t, []any{"header", c.header}, d["loc"])
		assert.Equal(t, c.typ, d["type"])
		assert.Nil(t, got, "the handler never ran")
	}
	rec, _ := do(t, r, http.MethodGet, "/gadgets/g1", "", "X-Client-Mobile", "1", "X-Analytics-Session-Id", "abc")
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.NotNil(t, got)
	assert.Equal(t, "1", got.Mobile)
	assert.Equal(t, "abc", got.Session)
}
