package imagegen_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/imagegen"
)

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR tiny")

// imagesServer speaks the OpenAI Images API: POST /v1/images/generations.
func imagesServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body map[string]any)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		handle(w, r, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestGenerateAsksForOnePNG(t *testing.T) {
	var got *http.Request
	var sent map[string]any
	base := imagesServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		got, sent = r, body
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"created": 1, "data": []map[string]any{{"b64_json": base64.StdEncoding.EncodeToString(png)}},
			"output_format": "png", "size": "1024x1536"})
	})
	g, err := imagegen.New(imagegen.Config{APIKey: "sk-images", BaseURL: base})
	require.NoError(t, err)
	out, err := g.Generate(context.Background(), "a loaf of bread", "1024x1536")
	require.NoError(t, err)
	assert.Equal(t, png, out)

	require.NotNil(t, got)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/v1/images/generations", got.URL.Path)
	assert.Equal(t, "Bearer sk-images", got.Header.Get("Authorization"))
	assert.Equal(t, map[string]any{"prompt": "a loaf of bread", "model": "gpt-image-1", "n": float64(1), "size": "1024x1536", "output_format": "png"}, sent)

	// The older models are asked for base64 (they answer links otherwise).
	g, err = imagegen.New(imagegen.Config{APIKey: "k", BaseURL: base, Model: "dall-e-3"})
	require.NoError(t, err)
	_, err = g.Generate(context.Background(), "x", "1024x1024")
	require.NoError(t, err)
	assert.Equal(t, "b64_json", sent["response_format"])
	assert.NotContains(t, sent, "output_format")
}

func TestGenerateErrors(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		body   string
		code   models.ErrorCode
		field  string
		detail string
	}{
		"refused prompt": {400, `{"error":{"message":"Your request was rejected by the safety system.","type":"image_generation_user_error","param":null,"code":"moderation_blocked"}}`, models.CodeInvalidArgument, "prompt", "safety system"},
		"bad size":       {400, `{"error":{"message":"Invalid size '1024x1536'.","type":"invalid_request_error","param":"size","code":"invalid_value"}}`, models.CodeInvalidArgument, "size", "Invalid size"},
		"bad key":        {401, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, models.CodeUpstreamUnavailable, "", "HOLDCO_IMAGES_API_KEY"},
		"rate limit":     {429, `{"error":{"message":"Rate limit reached.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, models.CodeRateLimited, "", "Rate limit reached"},
		"outage":         {500, `{"error":{"message":"The server had an error.","type":"server_error","param":null,"code":null}}`, models.CodeUpstreamUnavailable, "", "HTTP 500"},
		"no image":       {200, `{"created":1,"data":[]}`, models.CodeUpstreamUnavailable, "", "no image"},
		"not json":       {200, `<html>`, models.CodeUpstreamUnavailable, "", "could not be read"},
		"not a png":      {200, `{"created":1,"data":[{"b64_json":"` + base64.StdEncoding.EncodeToString([]byte("GIF89a....")) + `"}]}`, models.CodeUpstreamUnavailable, "", "other than a PNG"},
	} {
		t.Run(name, func(t *testing.T) {
			base := imagesServer(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			})
			g, err := imagegen.New(imagegen.Config{APIKey: "k", BaseURL: base})
			require.NoError(t, err)
			_, err = g.Generate(context.Background(), "p", "1024x1024")
			var me *models.Error
			require.ErrorAs(t, err, &me)
			assert.Equal(t, c.code, me.Code)
			assert.Equal(t, c.field, me.Field)
			assert.Contains(t, me.Detail, c.detail)
		})
	}
	_, err := imagegen.New(imagegen.Config{})
	assert.Error(t, err, "neither a key nor a local server")
}
