package app_test

import (
	"bytes"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/testenv"
)

// TestFilesAreDownloadedFromTheSitesOrigin: a file uploaded to the API is
// downloaded through a signed URL on the sites listener, never the API's
// origin, and neither listener logs the signed URL.
func TestFilesAreDownloadedFromTheSitesOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logs := &testenv.LogBuffer{}
	a, _ := startApp(t, embeddedConfig(t, dir, nil), slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		app.RoleAPI, app.RoleSites)
	api, sites := "http://"+a.APIAddr(), "http://"+a.SitesAddr()

	key := cliLogin(t, api, "ada@example.com")
	me := authedJSON(t, "GET", api+"/auth/me", key, "", 200)
	co := authedJSON(t, "POST", api+"/conglomerates/"+me["conglomerate_id"].(string)+"/companies", key, `{"name":"Ada Files"}`, 201)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "plan.md")
	require.NoError(t, err)
	_, _ = io.WriteString(fw, "# The plan")
	require.NoError(t, mw.Close())
	req, _ := http.NewRequest(http.MethodPost, api+"/companies/"+co["id"].(string)+"/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var f map[string]any
	require.NoError(t, jsonUnmarshal(b, &f))

	resp, _ = send(t, noFollow, "GET", api+"/companies/"+co["id"].(string)+"/files/"+f["id"].(string)+"/download", map[string]string{"Authorization": "Bearer " + key}, nil)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, sites+"/_blob/"), "downloads are on the sites origin: %s", loc)

	resp, content := send(t, http.DefaultClient, "GET", loc, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "# The plan", content)
	assert.Contains(t, resp.Header.Get("Content-Disposition"), `filename="plan.md"`)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "sandbox")

	resp, _ = send(t, http.DefaultClient, "GET", strings.Replace(loc, "sig=", "sig=x", 1), nil, nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	query := loc[strings.Index(loc, "?")+1:]
	for _, part := range strings.Split(query, "&") {
		assert.NotContains(t, logs.String(), part, "no listener logs the signed URL")
	}
}
