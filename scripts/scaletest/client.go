package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"holdco/scripts/internal/harness"
)

// callTool calls a connector tool and returns its structured or text
// result; a tool error (isError) is an error.
func callTool(ctx context.Context, mcpURL, token, tool string, args map[string]any) (string, error) {
	req, err := harness.MCPRequest(ctx, mcpURL, token, "tools/call", tool, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("tools/call %s: %d: %.300s", tool, resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				data = []byte(strings.TrimSpace(d))
			}
		}
		b = data
	}
	var rpc struct {
		Error  *struct{ Message string } `json:"error"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil {
		return "", fmt.Errorf("tools/call %s: %w: %.300s", tool, err, b)
	}
	if rpc.Error != nil {
		return "", fmt.Errorf("tools/call %s: %s", tool, rpc.Error.Message)
	}
	var text strings.Builder
	for _, c := range rpc.Result.Content {
		text.WriteString(c.Text)
	}
	if rpc.Result.IsError {
		return "", fmt.Errorf("tools/call %s: tool error: %.300s", tool, text.String())
	}
	return text.String(), nil
}

// upload sends one file as a multipart form.
func upload(base, bearer, companyID, path string, content []byte) (int, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", path)
	_, _ = fw.Write(content)
	_ = mw.WriteField("path", path)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", base+"/companies/"+companyID+"/files", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// download follows a file's download redirect to its signed URL and
// returns the bytes.
func download(base, bearer, companyID, fileID string) ([]byte, error) {
	s, b := harness.CallRetry("GET", base+"/companies/"+companyID+"/files/"+fileID+"/download", bearer, nil, time.Minute)
	if s != http.StatusFound {
		return nil, fmt.Errorf("download link: %d: %.200s", s, b)
	}
	// The Location header: ask again to read it (call drops headers).
	req, _ := http.NewRequest("GET", base+"/companies/"+companyID+"/files/"+fileID+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := harness.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("download: %d without Location", resp.StatusCode)
	}
	r2, err := http.Get(loc.String())
	if err != nil {
		return nil, err
	}
	defer r2.Body.Close()
	body, _ := io.ReadAll(r2.Body)
	if r2.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("signed URL answered %d: %.200s", r2.StatusCode, body)
	}
	return body, nil
}
