package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"holdco/mcp"
	"holdco/models"
)

// The connector's throughput against GET /health on the same listener and
// machine, and the latency of send_message answered with a task. In
// process, over loopback HTTP, with the fake introspector (the OAuth
// introspection cache is the authorization server's).
//
//	go test ./mcp -run '^$' -bench . -benchtime 3s

// post builds a 2026-07-28 request as the clients send it.
func post(url, token, method, name string, params map[string]any) *http.Request {
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.ProtocolVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func runParallel(b *testing.B, do func(c *http.Client) error) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(c); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

func drain(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return &statusError{resp.StatusCode}
	}
	return nil
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }

func BenchmarkConnector(b *testing.B) {
	w := newWorld(b)
	b.Run("health", func(b *testing.B) {
		runParallel(b, func(c *http.Client) error { return drain(c.Get(w.url + "/health")) })
	})
	b.Run("tools_list", func(b *testing.B) {
		runParallel(b, func(c *http.Client) error {
			return drain(c.Do(post(w.url, w.token, "tools/list", "", map[string]any{})))
		})
	})
	b.Run("get_credits", func(b *testing.B) {
		runParallel(b, func(c *http.Client) error {
			return drain(c.Do(post(w.url, w.token, "tools/call", "get_credits", map[string]any{"name": "get_credits", "arguments": map[string]any{}})))
		})
	})
	// The same call on a listener with the tools/call fast path off: the
	// SDK's session per request, as before the fast path.
	sdkURL := w.serveWith(b, w.e.Svc, "", func(d mcp.Deps) http.Handler {
		h, _ := mcp.NewCounting(d, true)
		return h
	})
	b.Run("get_credits_sdk", func(b *testing.B) {
		runParallel(b, func(c *http.Client) error {
			return drain(c.Do(post(sdkURL, w.token, "tools/call", "get_credits", map[string]any{"name": "get_credits", "arguments": map[string]any{}})))
		})
	})
	b.Run("send_message_to_task", func(b *testing.B) {
		if _, err := w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment,
			int64(10*b.N+100), "bench credits"); err != nil {
			b.Fatal(err)
		}
		c := &http.Client{}
		for i := 0; i < b.N; i++ {
			resp, err := c.Do(post(w.url, w.token, "tools/call", "send_message", map[string]any{"name": "send_message",
				"arguments": map[string]any{"business": "ada-bakery", "message": "Hello"}}))
			if err != nil {
				b.Fatal(err)
			}
			var out struct {
				Result struct {
					TaskID string `json:"taskId"`
				} `json:"result"`
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := json.Unmarshal(raw, &out); err != nil || out.Result.TaskID == "" {
				b.Fatalf("no task: %v %s", err, raw)
			}
			b.StopTimer()
			for {
				v, err := w.e.Svc.Turns.GetTurn(w.owner, out.Result.TaskID)
				if err != nil {
					b.Fatal(err)
				}
				if v.Status != models.TurnQueued && v.Status != models.TurnRunning {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.StartTimer()
		}
	})
}
