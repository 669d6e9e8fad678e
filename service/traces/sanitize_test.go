package traces_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/traces"
)

func TestRedactString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"key svc_u_v1_AbC-123_xyz in text", "key svc_u_v1_[redacted] in text"},
		{"company key=svc_c_v1_ZZZZZZZZZZZZ", "company key=svc_c_v1_[redacted]"},
		{"svc_a_v1_adminadminadmin", "svc_a_v1_[redacted]"},
		{"Authorization: Bearer abc.DEF-123_~+/xyz==", "Authorization: Bearer [redacted]"},
		{"authorization: bearer svc_u_v1_secretsecret", "authorization: bearer [redacted]"},
		{"ANTHROPIC_API_KEY is sk-ant-api03-AbCdEf123456_-x", "ANTHROPIC_API_KEY is sk-[redacted]"},
		{"openai sk-proj-1234567890abcdef and sk-abcdefgh12345678", "openai sk-[redacted] and sk-[redacted]"},
		{"stripe sk_live_51Habcdefghij whsec_abcdefghijkl", "stripe sk_live_[redacted] whsec_[redacted]"},
		{"login?user=ada&password=hunter2&x=1", "login?user=ada&password=[redacted]&x=1"},
		{`{"password": "correct horse", "user": "ada"}`, `{"password": [redacted], "user": "ada"}`},
		{"PASSWORD: hunter2 next", "PASSWORD: [redacted] next"},
		{"api_key='abc def' client_secret=xyz", "api_key=[redacted] client_secret=[redacted]"},
		{"postgres://holdco:s3cr3t@db:5432/app", "postgres://holdco:[redacted]@db:5432/app"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl end", "jwt [redacted] end"},
		{"aws AKIAABCDEFGHIJKLMNOP", "aws [redacted]"},
		// Ordinary text stays as it is.
		{"the task-abcdefghijk is done; passwords are hashed", "the task-abcdefghijk is done; passwords are hashed"},
		{"Used 1200 input tokens; bearer of news", "Used 1200 input tokens; bearer of news"},
	} {
		assert.Equal(t, c.want, traces.RedactString(c.in), c.in)
	}
}

func TestSanitizeRedactsEverywhere(t *testing.T) {
	secret := "svc_c_v1_" + strings.Repeat("k", 43)
	e := traces.Sanitize(traces.Event{
		Type:   traces.EventToolResult,
		Tool:   "http_get",
		CallID: "call_1",
		Error:  "401 with Authorization: Bearer " + secret,
		Data: map[string]any{
			"text":          "your key is " + secret,
			"nested":        []any{map[string]any{"deep": "sk-ant-" + strings.Repeat("a", 40)}},
			"password":      "hunter2",
			"DB-Password":   "x",
			"api_key":       map[string]any{"value": "plain"},
			"access_token":  "tok",
			"input_tokens":  12,
			"token":         42, // a number under a secret's name is not a secret
			"secret_exists": true,
			"max_tokens":    "1024",
		},
	})
	raw, err := json.Marshal(e)
	require.NoError(t, err)
	for _, leaked := range []string{secret, "hunter2", "sk-ant-aaaa", "plain", `"tok"`} {
		assert.NotContains(t, string(raw), leaked)
	}
	data := e.Data.(map[string]any)
	assert.Equal(t, "your key is svc_c_v1_[redacted]", data["text"])
	assert.Equal(t, "[redacted]", data["password"])
	assert.Equal(t, "[redacted]", data["DB-Password"])
	assert.Equal(t, "[redacted]", data["api_key"])
	assert.Equal(t, "[redacted]", data["access_token"])
	assert.Equal(t, json.Number("12"), data["input_tokens"])
	assert.Equal(t, json.Number("42"), data["token"])
	assert.Equal(t, true, data["secret_exists"])
	assert.Equal(t, "1024", data["max_tokens"])
	assert.Equal(t, "401 with Authorization: Bearer [redacted]", e.Error)
}

func TestSanitizeCutsLongStringsAndArrays(t *testing.T) {
	long := strings.Repeat("é", traces.MaxStringBytes) // 2 bytes each: the cut falls mid-character
	items := make([]any, traces.MaxArrayItems+7)
	for i := range items {
		items[i] = i
	}
	e := traces.Sanitize(traces.Event{Type: traces.EventModelResponse, Error: long,
		Data: map[string]any{"text": long, "short": "ok", "items": items}})
	data := e.Data.(map[string]any)
	text := data["text"].(string)
	assert.True(t, utf8.ValidString(text))
	assert.True(t, strings.HasSuffix(text, fmt.Sprintf("…[cut: %d bytes in all]", len(long))), text[len(text)-40:])
	assert.LessOrEqual(t, len(text), traces.MaxStringBytes+64)
	assert.Equal(t, text, e.Error)
	assert.Equal(t, "ok", data["short"])
	got := data["items"].([]any)
	require.Len(t, got, traces.MaxArrayItems+1)
	assert.Equal(t, "…[cut: 7 more items]", got[traces.MaxArrayItems])
}

func TestStoredLinesStaySmall(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	run := uuid.NewString()
	// Many strings, each under the per-string cut, still make a line over
	// the bound: the line keeps a preview of its data.
	big := map[string]any{}
	for i := range 40 {
		big[fmt.Sprintf("field%02d", i)] = strings.Repeat("x", traces.MaxStringBytes) + " password=hunter2"
	}
	require.NoError(t, traces.NewWriter(blobs).Append(ctx, run, "000001-tool-01",
		traces.Event{Type: traces.EventToolResult, Tool: "read_file", Data: big},
		traces.Event{Type: traces.EventToolResult, Tool: "read_file", Data: map[string]any{"unencodable": make(chan int)}}))
	rc, err := blobs.Open(ctx, traces.RunPrefix(run)+"000001-tool-01.jsonl")
	require.NoError(t, err)
	defer rc.Close()
	events := readEvents(t, blobs, traces.RunPrefix(run)+"000001-tool-01.jsonl")
	require.Len(t, events, 2)
	line, _ := json.Marshal(events[0])
	assert.Less(t, len(line), traces.MaxLineBytes)
	data := events[0]["data"].(map[string]any)
	assert.Contains(t, data["cut"], "the data took")
	assert.NotContains(t, string(line), "hunter2")
	assert.Contains(t, events[1]["data"], "unencodable", "data that is not JSON is reported, not lost silently")
}
