package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// tools/list without a session. The tool list is the same for every
// caller, and a stateless request costs the SDK a server session (made,
// connected and closed), the JSON-RPC decoding and the encoding of some
// 60 KB of tools, every time. The SDK's answer to a tools/list is
// therefore kept, by the request's params as sent (a client sends the same
// _meta every time), and a later tools/list with the same params and
// headers gets those bytes with its own id spliced in. The first request
// with given params is asked of the SDK (with a sentinel id); an error
// answer is kept as "not served here", and such requests, like anything
// else unusual (another id form, a header the SDK reads otherwise), go to
// the SDK as before. So the answer is the SDK's in every case
// (TestToolsListFastPathAnswersAsTheSDK).

// listedTools are the kept answers by params.
type listedTools struct {
	mu      sync.Mutex
	answers map[string]*keptList
}

// maxKeptLists bounds the kept answers (distinct params seen); past it,
// new params go to the SDK.
const maxKeptLists = 64

// keptList is the SDK's answer to tools/list with one set of params,
// split around its id; ok is false when the SDK did not answer a list.
type keptList struct {
	once           sync.Once
	ok             bool
	header         http.Header
	status         int
	prefix, suffix []byte
}

// toolsListKey marks a request the protocol filter found to be a plain
// tools/list; its value is a listRequest.
type toolsListKey struct{}

type listRequest struct {
	id     json.RawMessage // canonical JSON
	params json.RawMessage // as sent
}

// idSentinel is the id of the request that asks the SDK for the list: a
// string found once in its answer, where each request's id goes.
const idSentinel = `"holdco-tools-list-id"`

// plainToolsList reports whether msg (the body the filter read) is a
// tools/list the kept answers may serve, and returns its id and params.
func plainToolsList(r *http.Request, body []byte, msg *message) (listRequest, bool) {
	if msg.Method != "tools/list" || msg.JSONRPC != "2.0" || msg.Params.Cursor != nil || !canonicalID(msg.ID) ||
		r.Header.Get(headerProtocolVersion) != ProtocolVersion || r.Header.Get("Mcp-Method") != "tools/list" {
		return listRequest{}, false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return listRequest{}, false
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return listRequest{}, false
	}
	var raw struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &raw) != nil || len(raw.Params) == 0 || len(raw.Params) > 4096 {
		return listRequest{}, false
	}
	return listRequest{id: msg.ID, params: raw.Params}, true
}

// canonicalID reports whether id is written as the SDK would write it
// back: a small integer without sign tricks, or a string of plain
// characters.
func canonicalID(id json.RawMessage) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	if id[0] == '"' {
		if len(id) < 2 || id[len(id)-1] != '"' {
			return false
		}
		for _, c := range id[1 : len(id)-1] {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
				return false
			}
		}
		return true
	}
	if len(id) > 15 || id[0] == '0' && len(id) > 1 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// accepts is the SDK's reading of Accept: application/json and
// text/event-stream both acceptable.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// kept returns the kept answer for params, asking the SDK (stream,
// behind the bearer check) the first time; nil when it is not served here.
func (l *listedTools) kept(ctx context.Context, stream http.Handler, params json.RawMessage) *keptList {
	l.mu.Lock()
	k := l.answers[string(params)]
	if k == nil {
		if len(l.answers) >= maxKeptLists {
			l.mu.Unlock()
			return nil
		}
		if l.answers == nil {
			l.answers = map[string]*keptList{}
		}
		k = &keptList{}
		l.answers[string(params)] = k
	}
	l.mu.Unlock()
	k.once.Do(func() {
		body := `{"jsonrpc":"2.0","id":` + idSentinel + `,"method":"tools/list","params":` + string(params) + `}`
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(headerProtocolVersion, ProtocolVersion)
		req.Header.Set("Mcp-Method", "tools/list")
		rec := httptest.NewRecorder()
		stream.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		var answer struct {
			Result json.RawMessage `json:"result"`
		}
		i := bytes.Index(out, []byte(idSentinel))
		if rec.Code != http.StatusOK || i < 0 || bytes.Count(out, []byte(idSentinel)) != 1 ||
			json.Unmarshal(out, &answer) != nil || len(answer.Result) == 0 {
			return // an error or an unexpected shape: the SDK answers such requests itself
		}
		k.ok, k.header, k.status = true, rec.Header().Clone(), rec.Code
		k.prefix, k.suffix = bytes.Clone(out[:i]), bytes.Clone(out[i+len(idSentinel):])
	})
	if !k.ok {
		return nil
	}
	return k
}

// serveToolsList answers a plain tools/list (marked by the filter) from
// the kept answers and everything else through stream.
func (h *handler) serveToolsList(stream http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lr, ok := r.Context().Value(toolsListKey{}).(listRequest)
		var k *keptList
		// The SDK refuses a loopback listener's request under another Host
		// (DNS rebinding) while that check is on: such requests are its.
		if ok && (!h.localhostCheck || hostIsLoopback(r.Host)) {
			k = h.tools.kept(context.WithoutCancel(r.Context()), stream, lr.params)
		}
		if k == nil {
			stream.ServeHTTP(w, r)
			return
		}
		hdr := w.Header()
		for name, v := range k.header {
			hdr[name] = v
		}
		hdr.Set("Content-Length", strconv.Itoa(len(k.prefix)+len(lr.id)+len(k.suffix)))
		w.WriteHeader(k.status)
		_, _ = w.Write(k.prefix)
		_, _ = w.Write(lr.id)
		_, _ = w.Write(k.suffix)
	})
}

// hostIsLoopback reports whether a Host header names this machine.
func hostIsLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
