package httpfront

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo answers with what the handler saw of the request: a request the
// front serves must look to the handler exactly as it does from net/http.
func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	seen := map[string]any{
		"method": r.Method, "url": r.URL.String(), "path": r.URL.Path, "raw_query": r.URL.RawQuery, "force_query": r.URL.ForceQuery,
		"request_uri": r.RequestURI, "proto": r.Proto, "major": r.ProtoMajor, "minor": r.ProtoMinor, "host": r.Host,
		"header": r.Header, "content_length": r.ContentLength, "close": r.Close, "body": string(b),
		"transfer_encoding": r.TransferEncoding, "trailer": r.Trailer, "form": r.Form, "remote_is_set": r.RemoteAddr != "",
		"server_in_context":     r.Context().Value(http.ServerContextKey) != nil,
		"local_addr_in_context": r.Context().Value(http.LocalAddrContextKey) != nil,
		"body_is_nobody":        r.Body == http.NoBody,
	}
	if err != nil {
		seen["body_error"] = err.Error()
	}
	out, _ := json.Marshal(seen)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Add("X-Multi", "one")
	w.Header().Add("X-Multi", "two")
	if r.URL.Query().Get("status") == "created" {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = w.Write(out)
}

// pair is the same handler served by a plain net/http server and by a
// front (frontRoute, bodies up to 1 KB).
type pair struct {
	plain, front string
	srv          *Server
}

// frontRoute is the tests' routes: POST to /e/ and /batch/, GET of
// /loader.js and anything under /config/, OPTIONS of /e/.
func frontRoute(method, path string) bool {
	switch method {
	case http.MethodPost:
		return path == "/e/" || path == "/batch/"
	case http.MethodGet:
		return path == "/loader.js" || strings.HasPrefix(path, "/config/")
	case http.MethodOptions:
		return path == "/e/"
	}
	return false
}

func newPair(t testing.TB, h http.Handler) *pair { return newPairWith(t, h, 1<<10) }

func newPairWith(t testing.TB, h http.Handler, maxBody int64) *pair {
	t.Helper()
	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	frontLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv := &Server{HTTP: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, Route: frontRoute, MaxBody: maxBody}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = plain.Serve(plainLn) }()
	go func() { defer wg.Done(); _ = srv.Serve(frontLn) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = plain.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
		wg.Wait()
	})
	return &pair{plain: plainLn.Addr().String(), front: frontLn.Addr().String(), srv: srv}
}

// exchange writes raw to addr, closes the writing half and reads every
// answer until the server closes.
func exchange(t testing.TB, addr string, raw []byte) []byte {
	t.Helper()
	out, _ := exchangeReset(t, addr, raw)
	return out
}

// exchangeReset is exchange, and whether the server reset the connection
// (what was read before is returned).
func exchangeReset(t testing.TB, addr string, raw []byte) (out []byte, reset bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	out, err = io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("reading the answers: %v", err)
	}
	return out, err != nil && isReset(err)
}

func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

// answer is a response as a client reads it, and its header lines as
// sent (sorted), without its Date and its framing: net/http sends a body
// over 2 KB, written before the handler returned, chunked, the front
// with its length; a client reads the same body either way (and the
// next answer after it).
type answer struct {
	Status int
	Header http.Header
	Lines  []string
	Body   string
}

// answers reads the responses in raw, and whether anything followed
// that is not one.
func answers(raw []byte) (out []answer, rest string) {
	for len(raw) > 0 {
		var lines []string
		if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
			for _, l := range strings.Split(string(raw[:i]), "\r\n")[1:] {
				if !strings.HasPrefix(l, "Date: ") && !strings.HasPrefix(l, "Content-Length: ") && l != "Transfer-Encoding: chunked" {
					lines = append(lines, l)
				}
			}
			slices.Sort(lines)
		}
		src := bytes.NewReader(raw)
		br := bufio.NewReader(src)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b, _ := io.ReadAll(br)
			return out, "unreadable: " + err.Error() + string(b)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return out, "body: " + err.Error()
		}
		resp.Header.Del("Date")
		resp.Header.Del("Content-Length")
		out = append(out, answer{Status: resp.StatusCode, Header: resp.Header, Lines: lines, Body: string(body)})
		raw = raw[len(raw)-src.Len()-br.Buffered():]
	}
	return out, ""
}

func compare(t *testing.T, p *pair, raw string) (served int64) {
	t.Helper()
	before := p.srv.Stats().Served
	plain := exchange(t, p.plain, []byte(raw))
	front := exchange(t, p.front, []byte(raw))
	served = p.srv.Stats().Served - before
	sameAnswers(t, raw, plain, front)
	return served
}

// sameAnswers fails the test unless the two servers' answers to raw read
// the same to a client (Date aside).
func sameAnswers(t *testing.T, raw string, plain, front []byte) {
	t.Helper()
	want, wantRest := answers(plain)
	got, gotRest := answers(front)
	wj, _ := json.MarshalIndent(want, "", " ")
	gj, _ := json.MarshalIndent(got, "", " ")
	if string(wj) != string(gj) || wantRest != gotRest {
		t.Fatalf("request %q:\nnet/http answered %s%s\nthe front answered %s%s", raw, wj, wantRest, gj, gotRest)
	}
}

// FuzzFront sends the same bytes to net/http and to a front serving the
// same handler: the answers must read the same. Whatever the front takes
// for itself must reach the handler as net/http would hand it over, and
// whatever it cannot read exactly so must go to net/http whole.
func FuzzFront(f *testing.F) {
	for _, tc := range frontCases {
		f.Add([]byte(tc.raw))
	}
	p := newPair(f, http.HandlerFunc(echo))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 || len(raw) > 16<<10 {
			return
		}
		plain, plainReset := exchangeReset(t, p.plain, raw)
		front, frontReset := exchangeReset(t, p.front, raw)
		if plainReset || frontReset {
			t.Skip("a connection was reset: what was read before depends on timing, not on the server")
		}
		sameAnswers(t, string(raw), plain, front)
	})
}

const ok = "POST /e/ HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"event\":\"x\"}"

// frontCases are requests on one connection, and how many of them the
// front serves itself (the rest go to net/http).
var frontCases = []struct {
	name, raw string
	served    int64
}{
	{"a capture post", ok, 1},
	{"the other path", strings.Replace(ok, "/e/", "/batch/", 1), 1},
	{"a query", strings.Replace(ok, "/e/", "/e/?compression=gzip-js&ver=1.2.3&status=created", 1), 1},
	{"an empty query", strings.Replace(ok, "/e/", "/e/?", 1), 1},
	{"escapes in the query", strings.Replace(ok, "/e/", "/e/?q=%41%2f&x=a+b", 1), 1},
	{"two pipelined", ok + ok, 2},
	{"one kept alive, then another", ok + strings.Replace(ok, "/e/", "/batch/", 1) + ok, 3},
	{"closed by the client", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nConnection: close\r\n", 1) + ok, 1},
	{"keep-alive said", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nConnection: Keep-Alive\r\n", 1), 1},
	{"names in any case, values trimmed, repeated",
		"POST /e/ HTTP/1.1\r\nhost: a.example:8080\r\ncontent-length: 2\r\nx-FOO-bar:  v  1\t\r\nX-Foo-Bar: w\r\nDNT:1\r\nSec-GPC: 1\r\nOrigin: https://site.example\r\n\r\n{}", 1},
	{"an empty value", "POST /e/ HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nContent-Length: 0\r\n\r\n", 1},
	{"no body", "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 1},
	{"a body cut short", "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", 1},

	{"GET", strings.Replace(ok, "POST", "GET", 1), 0},
	{"post in lower case", strings.Replace(ok, "POST", "post", 1), 0},
	{"another path", strings.Replace(ok, "/e/", "/e/x", 1), 0},
	{"a path without its slash", strings.Replace(ok, "/e/", "/e", 1), 0},
	{"an escaped path", strings.Replace(ok, "/e/", "/%65/", 1), 0},
	{"dot segments", strings.Replace(ok, "/e/", "/x/../e/", 1), 0},
	{"an absolute target", strings.Replace(ok, "/e/", "http://example.com/e/", 1), 0},
	{"HTTP/1.0", strings.Replace(ok, "HTTP/1.1", "HTTP/1.0", 1), 0},
	{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0},
	{"two spaces", strings.Replace(ok, "POST /e/", "POST  /e/", 1), 0},
	{"a bad query", strings.Replace(ok, "/e/", "/e/?a=<b>", 1), 0},
	{"a bad escape in the query", strings.Replace(ok, "/e/", "/e/?a=%zz", 1), 0},
	{"a fragment", strings.Replace(ok, "/e/", "/e/#x", 1), 0},
	{"chunked", "POST /e/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 0},
	{"chunked and a length", "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 0},
	{"expect", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nExpect: 100-continue\r\n", 1), 0},
	{"upgrade", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n", 1), 0},
	{"two lengths", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nContent-Length: 13\r\n", 1), 0},
	{"two different lengths", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nContent-Length: 12\r\n", 1), 0},
	{"a signed length", strings.Replace(ok, "Content-Length: 13", "Content-Length: +13", 1), 0},
	{"a length with a leading zero", strings.Replace(ok, "Content-Length: 13", "Content-Length: 013", 1), 0},
	{"a length in hex", strings.Replace(ok, "Content-Length: 13", "Content-Length: 0xd", 1), 0},
	{"no length", "POST /e/ HTTP/1.1\r\nHost: x\r\n\r\n", 1},
	{"a GET", "GET /loader.js?c=abc HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 1},
	{"a GET under a prefix", "GET /config/k/config.js HTTP/1.1\r\nHost: x\r\n\r\n", 1},
	{"a GET with a body", "GET /loader.js HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 0},
	{"a GET with an empty body", "GET /loader.js HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 1},
	{"a preflight with a body", "OPTIONS /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 0},
	{"a path net/url escapes", "GET /config/a!b'c(d)e*f HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	{"a path with sub-delims", "GET /config/a$b&c+d,e;f=g:h@i HTTP/1.1\r\nHost: x\r\n\r\n", 1},
	{"a preflight", "OPTIONS /e/ HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: POST\r\n\r\n", 1},
	{"a browser's sequence", "GET /loader.js HTTP/1.1\r\nHost: x\r\n\r\nOPTIONS /e/ HTTP/1.1\r\nHost: x\r\n\r\n" + ok + ok, 4},
	{"HEAD", "HEAD /loader.js HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	{"OPTIONS elsewhere", "OPTIONS /batch/ HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	{"a long request line", "POST /e/?" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	{"a body over MaxBody", "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n" + strings.Repeat("a", 1025), 0},
	{"no host", strings.Replace(ok, "Host: example.com\r\n", "", 1), 0},
	{"two hosts", strings.Replace(ok, "Host: example.com\r\n", "Host: a\r\nHost: b\r\n", 1), 0},
	{"a host with user info", strings.Replace(ok, "Host: example.com", "Host: u@example.com", 1), 0},
	{"a host in brackets", strings.Replace(ok, "Host: example.com", "Host: [::1]:80", 1), 0},
	{"a folded header", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nX-A: a\r\n b\r\n", 1), 0},
	{"bare line feeds", strings.ReplaceAll(ok, "\r\n", "\n"), 0},
	{"a space before the colon", strings.Replace(ok, "Content-Type:", "Content-Type :", 1), 0},
	{"a control in a value", strings.Replace(ok, "application/json", "application/\x01json", 1), 0},
	{"a byte over 0x7f in a value", strings.Replace(ok, "application/json", "application/jsön", 1), 0},
	{"a line with no colon", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nnocolon\r\n", 1), 0},
	{"a name with a slash", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nX/Y: 1\r\n", 1), 0},
	{"a head over 8 KB", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\nX-Big: "+strings.Repeat("b", 9000)+"\r\n", 1), 0},
	{"65 headers", strings.Replace(ok, "Host: example.com\r\n", "Host: example.com\r\n"+strings.Repeat("X-N: 1\r\n", 62), 1), 0},
	{"a head cut short", "POST /e/ HTTP/1.1\r\nHost: x\r\n", 0},
	{"garbage", "\x00\x01\x02 hello\r\n\r\n", 0},
	{"fast, then GET on the same connection", ok + "GET /x HTTP/1.1\r\nHost: x\r\n\r\n" + ok, 1},
	{"fast, then a chunked one", ok + "POST /e/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 1},
}

func TestTheFrontServesPlainPostsAsNetHTTPWould(t *testing.T) {
	p := newPair(t, http.HandlerFunc(echo))
	for _, tc := range frontCases {
		t.Run(tc.name, func(t *testing.T) {
			if served := compare(t, p, tc.raw); served != tc.served {
				t.Errorf("the front served %d requests itself, want %d", served, tc.served)
			}
		})
	}
}

func TestTheFrontsAnswerReadsAsNetHTTPs(t *testing.T) {
	// Headers a handler sets, no Content-Type (sniffed), statuses without
	// a body, a panic.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.RawQuery {
		case "sniff":
			_, _ = w.Write([]byte("<html><body>hi</body></html>"))
		case "nocontent":
			w.Header().Set("X-A", "1")
			w.WriteHeader(http.StatusNoContent)
			_, _ = w.Write([]byte("dropped"))
		case "nothing":
		case "twice":
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusTeapot)
		case "close":
			w.Header().Set("Connection", "close")
		case "split":
			w.Header().Set("X-Split", "a\r\nInjected: yes")
			_, _ = w.Write([]byte("ok"))
		case "late":
			w.WriteHeader(http.StatusAccepted)
			w.Header().Set("X-Late", "not sent")
			_, _ = w.Write([]byte("ok"))
			w.Header().Set("X-Later", "not sent")
		case "badname":
			w.Header()["X-Bad\r\nInjected"] = []string{"yes"}
			w.Header()["X-Bad Name"] = []string{"yes"}
			_, _ = w.Write([]byte("ok"))
		case "notmodified":
			w.Header().Set("Content-Type", "text/javascript")
			w.Header().Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusNotModified)
		case "encoded":
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write([]byte("\x1f\x8b not really"))
		case "spaces":
			w.Header().Set("X-Spaces", " \t padded \t ")
			w.Header().Set("X-Lines", "\r\nstarts with a line")
		case "emptytype":
			w.Header()["Content-Type"] = nil
			_, _ = w.Write([]byte("<html>x</html>"))
		case "unknownstatus":
			w.WriteHeader(299)
		case "keepalive", "keepalive-closed":
			w.Header().Set("Connection", "keep-alive")
		}
	})
	p := newPair(t, h)
	for _, q := range []string{"sniff", "nocontent", "nothing", "twice", "close", "split", "late", "badname", "notmodified", "encoded", "spaces",
		"emptytype", "unknownstatus", "keepalive", "keepalive-closed"} {
		t.Run(q, func(t *testing.T) {
			raw := strings.Replace(ok, "/e/", "/e/?"+q, 1)
			if q == "keepalive-closed" {
				raw = strings.Replace(raw, "Host: example.com\r\n", "Host: example.com\r\nConnection: close\r\n", 1)
			}
			if served := compare(t, p, raw+raw); served == 0 {
				t.Error("the front did not serve it")
			}
		})
	}
}

// A request's context ends when its handler returns, as net/http's does:
// what waits on it does not pile up on a kept-alive connection.
func TestARequestsContextEndsWithItsHandler(t *testing.T) {
	ended := make(chan struct{}, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() {
			<-r.Context().Done()
			ended <- struct{}{}
		}()
	})
	_, addr, _ := serveFront(t, h, &http.Server{ReadHeaderTimeout: 10 * time.Second})
	c := dialT(t, addr)
	_, _ = io.WriteString(c, ok+ok)
	br := bufio.NewReader(c)
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case <-ended:
		case <-time.After(20 * time.Second):
			t.Fatal("the request's context was still open after its answer")
		}
	}
}

// A connection handed to net/http keeps its ReadFrom (sendfile, splice):
// a copied answer arrives whole, on the same connection as the front's
// answer before it.
func TestAHandedOffConnectionCopiesAnswersWhole(t *testing.T) {
	big := strings.Repeat("0123456789", 50_000)
	p := newPair(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/copy" {
			_, _ = io.Copy(w, strings.NewReader(big))
		}
	}))
	if served := compare(t, p, ok+"GET /copy HTTP/1.1\r\nHost: x\r\n\r\n"); served != 1 {
		t.Errorf("the front served %d", served)
	}
	got, rest := answers(exchange(t, p.front, []byte("GET /copy HTTP/1.1\r\nHost: x\r\n\r\n")))
	if len(got) != 1 || got[0].Body != big || rest != "" {
		t.Errorf("the copied answer: %d answers, %q after", len(got), rest)
	}
}

// A body larger than the pooled buffer is read as it comes, whole.
func TestTheFrontReadsALargeBodyWhole(t *testing.T) {
	p := newPairWith(t, http.HandlerFunc(echo), 1<<20)
	body := strings.Repeat("0123456789abcdef", 300<<10/16)
	raw := "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if served := compare(t, p, raw+raw); served != 2 {
		t.Errorf("the front served %d of 2", served)
	}
}

func TestAPanickingHandlerClosesTheConnection(t *testing.T) {
	p := newPair(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	for _, addr := range []string{p.plain, p.front} {
		if out := exchange(t, addr, []byte(ok+ok)); len(out) != 0 {
			t.Errorf("%s answered %q to a handler that aborted", addr, out)
		}
	}
}

// serveFront runs a front with h and the timeouts given, until the test
// ends; it answers the front and its listener's address.
func serveFront(t *testing.T, h http.Handler, hs *http.Server) (*Server, string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.Handler = h
	srv := &Server{HTTP: hs, Route: frontRoute, MaxBody: 1 << 10}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv, ln.Addr().String(), served
}

// closedBy reads c until the server closes it and returns what came; it
// fails the test when the bound passes first.
func closedBy(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the server kept the connection open")
	}
	return string(b)
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The front keeps net/http's bounds: a head or a body that stalls, and a
// connection idle after its answer, are closed (the only wait is for the
// close; no duration is asserted).
func TestTheFrontDropsSlowAndIdleClients(t *testing.T) {
	_, addr, _ := serveFront(t, http.HandlerFunc(echo), &http.Server{ReadHeaderTimeout: 200 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	t.Run("nothing sent", func(t *testing.T) {
		if got := closedBy(t, dialT(t, addr)); got != "" {
			t.Errorf("answered %q", got)
		}
	})
	t.Run("stalled head", func(t *testing.T) {
		c := dialT(t, addr)
		_, _ = io.WriteString(c, "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-")
		if got := closedBy(t, c); got != "" {
			t.Errorf("answered %q to a head that never ended", got)
		}
	})
	t.Run("stalled body", func(t *testing.T) {
		c := dialT(t, addr)
		_, _ = io.WriteString(c, "POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":")
		got := closedBy(t, c)
		// The handler read what came and the error, as from net/http.
		if !strings.Contains(got, `"body":"{\"a\":"`) || !strings.Contains(got, "i/o timeout") || !strings.Contains(got, "Connection: close") {
			t.Errorf("answered %q", got)
		}
	})
	t.Run("idle after an answer", func(t *testing.T) {
		c := dialT(t, addr)
		_, _ = io.WriteString(c, ok)
		got := closedBy(t, c)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || strings.Contains(got, "Connection: close") {
			t.Errorf("answered %q", got)
		}
	})
}

// Shutdown lets the front's request in flight finish (its answer says
// Connection: close), closes idle connections, and Serve returns
// http.ErrServerClosed; net/http's connections are shut down with it.
func TestShutdownLetsTheFrontsRequestsFinish(t *testing.T) {
	entered, release := make(chan string, 2), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- r.URL.Path
		<-release
		_, _ = io.WriteString(w, "done "+r.URL.Path)
	})
	// A header timeout longer than the test: only Shutdown ends the
	// connection that sent half a head.
	srv, addr, served := serveFront(t, h, &http.Server{ReadHeaderTimeout: time.Minute})

	idle := dialT(t, addr) // a front connection between requests
	_, _ = io.WriteString(idle, "GET /loader.js HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	release <- struct{}{}
	if resp, err := http.ReadResponse(bufio.NewReader(idle), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first answer: %v", err)
	}
	half := dialT(t, addr) // half a head on a kept-alive connection
	_, _ = io.WriteString(half, "GET /loader.js HTTP/1.1\r\nHost: x\r\n\r\nPOST /e/ HTTP/1.1\r\nHost: x\r\n")
	<-entered
	release <- struct{}{}
	if resp, err := http.ReadResponse(bufio.NewReader(half), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first answer: %v", err)
	}
	busy := dialT(t, addr) // the front's, in its handler
	_, _ = io.WriteString(busy, ok)
	handed := dialT(t, addr) // net/http's, in its handler
	_, _ = io.WriteString(handed, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
	paths := map[string]bool{<-entered: true, <-entered: true}
	if !paths["/e/"] || !paths["/other"] {
		t.Fatalf("handlers entered: %v", paths)
	}

	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { shut <- srv.Shutdown(ctx) }()
	for name, c := range map[string]net.Conn{"idle": idle, "half a head": half} {
		if got := closedBy(t, c); got != "" {
			t.Errorf("the %s connection got %q", name, got)
		}
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with two requests in flight", err)
	default:
	}
	close(release)
	for name, c := range map[string]net.Conn{"front": busy, "net/http": handed} {
		got := closedBy(t, c)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.Contains(got, "Connection: close") {
			t.Errorf("%s: the request in flight got %q", name, got)
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve returned %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the listener still accepts")
	}
}
