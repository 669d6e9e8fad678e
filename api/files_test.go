package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/api"
	"holdco/service"
	"holdco/service/files"
	"holdco/service/usecases"
	"holdco/testenv"
)

// uploadAs stores a file through the use case (fixtures) and returns its
// id.
func (w *world) uploadAs(cred, companyID, path string) string {
	w.t.Helper()
	p, err := w.svc.Identity.Authenticate(context.Background(), w.creds[cred])
	require.NoError(w.t, err)
	f, err := w.svc.Files.Upload(service.WithPrincipal(context.Background(), p), companyID,
		files.UploadInput{Path: path, Source: "fixture", ContentType: "text/plain", Size: 5, Body: strings.NewReader("hello")})
	require.NoError(w.t, err)
	return f.ID
}

type formPart struct {
	name, filename, contentType, body string
}

func multipartBody(t testing.TB, parts ...formPart) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, _ = pw.Write([]byte(p.body))
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), b.Bytes()
}

func (w *world) upload(cred, companyID string, parts ...formPart) *httptest.ResponseRecorder {
	ct, body := multipartBody(w.t, parts...)
	req := httptest.NewRequest(http.MethodPost, "/companies/"+companyID+"/files", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	if bearer := w.creds[cred]; bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

func TestUploadListDownloadDeleteOverREST(t *testing.T) {
	w := newWorld(t)
	// path after file: parts may come in any order.
	rec := w.upload(userA, w.adaCo, formPart{name: "file", filename: "ignored.txt", contentType: "text/plain", body: "hello files"},
		formPart{name: "path", body: "docs/readme.txt"}, formPart{name: "source", body: "agent"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var f api.CompanyFileResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &f))
	assert.Equal(t, "docs/readme.txt", f.Path)
	assert.Equal(t, "readme.txt", f.Name)
	assert.Equal(t, "agent", f.Source)
	assert.Equal(t, int64(11), f.SizeBytes)
	assert.Equal(t, "text/plain", f.ContentType)

	var list api.FileListResponse
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/files", userA, "", http.StatusOK, &list)
	require.Len(t, list.Files, 1)
	assert.Equal(t, int64(11), list.UsedBytes)
	assert.Equal(t, int64(files.DefaultQuotaBytes), list.QuotaBytes)

	rec = w.do(http.MethodGet, "/companies/"+w.adaCo+"/files/"+f.ID+"/download", userA, "")
	require.Equal(t, http.StatusFound, rec.Code, rec.Body.String())
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	loc := rec.Header().Get("Location")
	require.True(t, strings.HasPrefix(loc, w.sites.URL+"/_blob/"), loc)
	resp, err := w.sites.Client().Get(loc)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, "hello files", string(body))
	assert.Equal(t, `attachment; filename="readme.txt"; filename*=UTF-8''readme.txt`, resp.Header.Get("Content-Disposition"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))

	sig := loc[strings.Index(loc, "sig=")+4:]
	assert.NotContains(t, w.logs.String(), sig, "the signed URL never reaches the log")
	assert.NotContains(t, w.logs.String(), "exp=")

	var del api.PrefixDeleteResponse
	w.call(http.MethodDelete, "/companies/"+w.adaCo+"/files?prefix=docs", userA, "", http.StatusOK, &del)
	assert.Equal(t, api.PrefixDeleteResponse{Prefix: "docs/", DeletedCount: 1, DeletedBytes: 11}, del)
	rec = w.do(http.MethodDelete, "/companies/"+w.adaCo+"/files/"+f.ID, userA, "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
}

func TestUploadRefusals(t *testing.T) {
	w := newWorld(t)
	validation := func(rec *httptest.ResponseRecorder, loc ...any) {
		t.Helper()
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
		var body api.HTTPValidationError
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		require.NotEmpty(t, body.Detail)
		assert.Equal(t, loc, body.Detail[0].Loc)
	}
	validation(w.upload(userA, w.adaCo, formPart{name: "path", body: "../etc/passwd"}, formPart{name: "file", filename: "x", body: "x"}), "body", "path")
	validation(w.upload(userA, w.adaCo, formPart{name: "path", body: "a\x01b"}, formPart{name: "file", filename: "x", body: "x"}), "body", "path")
	validation(w.upload(userA, w.adaCo, formPart{name: "path", body: "x"}), "body", "file")
	validation(w.upload(userA, "not-a-uuid", formPart{name: "file", filename: "x", body: "x"}), "path", "company_id")

	rec := w.upload(userB, w.adaCo, formPart{name: "file", filename: "x", body: "x"})
	assert.Equal(t, http.StatusForbidden, rec.Code)
	rec = w.upload(anon, w.adaCo, formPart{name: "file", filename: "x", body: "x"})
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"))
	rec = w.do(http.MethodPost, "/companies/"+w.adaCo+"/files", userA, `{"file":"x"}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, rec.Code)

	var list api.FileListResponse
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/files", userA, "", http.StatusOK, &list)
	assert.Empty(t, list.Files)
}

func TestUploadRateLimitAnswers429WithRetryAfter(t *testing.T) {
	// The clock stands still: on a loaded machine the burst's uploads take
	// seconds, and a moving clock would refill the bucket between them.
	stopped := time.Now().UTC()
	w := newWorldWith(t, usecases.Options{Clock: func() time.Time { return stopped }})
	for range files.UploadBurst {
		require.Equal(t, http.StatusOK, w.upload(userA, w.adaCo, formPart{name: "file", filename: "same.txt", body: "x"}).Code)
	}
	rec := w.upload(userA, w.adaCo, formPart{name: "file", filename: "same.txt", body: "x"})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), `"error":"rate_limited"`)
}

// rawServer serves the router on a real listener with holdco's server
// settings: the refusals must not depend on a read timeout.
func rawServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// rawRequest writes headers only (the body never comes) and reads the
// answer within a deadline.
func rawRequest(t *testing.T, addr, head string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = io.WriteString(conn, head)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "answered before the body arrived")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer ends without the body arriving")
	return resp, string(b)
}

// TestRefusedBeforeTheBodyArrives: a too large Content-Length, a missing
// credential and another account's company are answered at once, on a
// connection whose body never comes.
func TestRefusedBeforeTheBodyArrives(t *testing.T) {
	w := newWorld(t)
	addr := rawServer(t, w.handler)
	head := func(companyID, cred string, length int64) string {
		h := "POST /companies/" + companyID + "/files HTTP/1.1\r\nHost: holdco.test\r\n" +
			"Content-Type: multipart/form-data; boundary=xyz\r\n" + fmt.Sprintf("Content-Length: %d\r\n", length)
		if cred != "" {
			h += "Authorization: Bearer " + w.creds[cred] + "\r\n"
		}
		return h + "\r\n"
	}

	resp, body := rawRequest(t, addr, head(w.adaCo, userA, 1<<30))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, body)
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	assert.Equal(t, "too_large", e["error"])
	assert.EqualValues(t, files.DefaultMaxFileBytes, e["limit_bytes"])
	assert.EqualValues(t, 1<<30-64<<10, e["size_bytes"])

	resp, body = rawRequest(t, addr, head(w.adaCo, "", 1<<30))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	resp, body = rawRequest(t, addr, head(w.adaCo, "", 100))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a small body that never comes: %s", body)
	resp, body = rawRequest(t, addr, head(w.adaCo, userB, 100))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
}

// TestQuotaFullRefusedBeforeTheBody: with the quota nearly used, a
// Content-Length over what is left is 413 with used and quota, at once.
func TestQuotaFullRefusedBeforeTheBody(t *testing.T) {
	w := newWorldWith(t, usecases.Options{FileLimits: files.Limits{MaxFileBytes: 1 << 20, QuotaBytes: 2 << 20}})
	for _, p := range []string{"a", "b"} {
		big := strings.Repeat("x", 1<<20-10)
		rec := w.upload(userA, w.adaCo, formPart{name: "file", filename: p, body: big})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	addr := rawServer(t, w.handler)
	resp, body := rawRequest(t, addr, "POST /companies/"+w.adaCo+"/files HTTP/1.1\r\nHost: holdco.test\r\nAuthorization: Bearer "+w.creds[userA]+
		"\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 200000\r\n\r\n")
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, body)
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	assert.EqualValues(t, 2<<20-20, e["used_bytes"])
	assert.EqualValues(t, 2<<20, e["quota_bytes"])
}

// TestChunkedUploadIsCutAtTheLimit: without Content-Length the body is
// streamed and refused as soon as the file passes the limit.
func TestChunkedUploadIsCutAtTheLimit(t *testing.T) {
	w := newWorldWith(t, usecases.Options{FileLimits: files.Limits{MaxFileBytes: 1000, QuotaBytes: 1 << 20}})
	ct, body := multipartBody(t, formPart{name: "file", filename: "big.bin", body: strings.Repeat("x", 5000)})
	srv := httptest.NewServer(w.handler)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/companies/"+w.adaCo+"/files", io.MultiReader(bytes.NewReader(body)))
	require.NoError(t, err)
	req.ContentLength = -1
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+w.creds[userA])
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(b))
	assert.Contains(t, string(b), `"limit_bytes":1000`)
}

// TestSignedURLNeverLogged: the download's Location is a credential; the
// API's access log (and its error log) never holds it.
func TestSignedURLNeverLogged(t *testing.T) {
	var logs testenv.LogBuffer
	w := newWorld(t)
	r := api.New(api.Deps{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Service: w.svc})
	id := w.uploadAs(userA, w.adaCo, "x.txt")
	req := httptest.NewRequest(http.MethodGet, "/companies/"+w.adaCo+"/files/"+id+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+w.creds[userA])
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusFound, rec.Code)
	loc := rec.Header().Get("Location")
	require.Contains(t, logs.String(), "http request", "the request was logged")
	for _, part := range strings.Split(loc[strings.Index(loc, "?")+1:], "&") {
		assert.NotContains(t, logs.String(), part)
	}
	// A request to the download URL's own shape on the API is logged without its query.
	req = httptest.NewRequest(http.MethodGet, "/_blob/x?sig=SECRETSIG", nil)
	r.ServeHTTP(httptest.NewRecorder(), req)
	assert.NotContains(t, logs.String(), "SECRETSIG")
}
