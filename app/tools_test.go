package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/config"
	"holdco/service/webtools"
)

// The research and image providers exist when their settings are set, and
// reach the configured servers (local ones speaking the Brave Search and
// OpenAI Images APIs).
func TestToolProvidersFollowTheConfiguration(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) config.Tools {
		c, err := config.Load(func(k string) string { return env[k] })
		require.NoError(t, err)
		return c.Tools
	}
	r, im, err := toolProviders(load(nil))
	require.NoError(t, err)
	assert.Nil(t, r, "web_research answers not_configured")
	assert.Nil(t, im, "generate_image answers not_configured")

	png := []byte("\x89PNG\r\n\x1a\nimage")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.URL.Path == "/res/v1/web/search" && req.Header.Get("X-Subscription-Token") == "brave-key":
			_ = json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": []map[string]any{{"title": "T", "url": "https://example.com", "description": "D"}}}})
		case req.URL.Path == "/v1/images/generations" && req.Header.Get("Authorization") == "Bearer sk-images":
			_ = json.NewEncoder(w).Encode(map[string]any{"created": 1, "data": []map[string]any{{"b64_json": base64.StdEncoding.EncodeToString(png)}}})
		default:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"no"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	r, im, err = toolProviders(load(map[string]string{"HOLDCO_RESEARCH_API_KEY": "brave-key", "HOLDCO_RESEARCH_BASE_URL": srv.URL + "/res/v1",
		"HOLDCO_IMAGES_API_KEY": "sk-images", "HOLDCO_IMAGES_BASE_URL": srv.URL + "/v1"}))
	require.NoError(t, err)
	require.NotNil(t, r)
	require.NotNil(t, im)
	res, err := r.Search(context.Background(), "q", 3)
	require.NoError(t, err)
	assert.Equal(t, []webtools.Result{{Title: "T", URL: "https://example.com", Snippet: "D"}}, res)
	got, err := im.Generate(context.Background(), "a loaf", "1024x1024")
	require.NoError(t, err)
	assert.Equal(t, png, got)
}
