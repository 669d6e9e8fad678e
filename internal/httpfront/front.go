// Package httpfront serves a listener's busiest plain requests with a
// lean HTTP/1.1 loop and hands every other connection to net/http.
//
// Analytics capture is posted by every visitor's browser of every
// company's site: many times the rest of the API together, each request a
// small POST answered with a small body. net/http's own work around such a
// request (a background read and its goroutine, a buffered
// writer, header sorting) costs as much CPU as a bare handler's whole
// request. The front reads each connection's requests itself while they
// are ones it serves (Server.Route: GET, POST or OPTIONS on a path it
// names; HTTP/1.1, a body within Server.MaxBody, headers it reads the way
// net/http does) and calls
// the listener's handler with an *http.Request built as net/http builds
// it, so the handler and its middleware (metrics, tracing, request ids,
// access log, recovery) are the same for both. At the first request that
// is anything else (another path or method, chunked, Expect, Upgrade, a
// header it does not read plainly, a malformed request) the connection,
// with the bytes read so far, goes to net/http, which answers it and every
// later request on it as it always did. A request the front serves is one
// net/http would have read identically (front_test.go compares the two on
// the same bytes, and FuzzFront on random ones).
package httpfront

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Server is a listener's front: fast requests on its own connections,
// everything else through HTTP.
type Server struct {
	// HTTP serves every connection the front hands over; its Handler is
	// also what the front calls, and its timeouts (ReadHeaderTimeout,
	// ReadTimeout, WriteTimeout, IdleTimeout) bound the front's
	// connections the same way.
	HTTP *http.Server
	// Route reports whether the front serves a request of this method
	// (GET, POST or OPTIONS) on this path (as sent, without the query;
	// never percent-escaped).
	Route func(method, path string) bool
	// MaxBody is the longest body the front reads itself; a longer one
	// goes to net/http (whose handler answers it).
	MaxBody int64
	// Logger gets a handler's panic (as net/http's ErrorLog would).
	Logger *slog.Logger
	// OnServe and OnHandOff, when set, count each request the front
	// answers and each connection it hands to net/http (metrics).
	OnServe, OnHandOff func()

	mu       sync.Mutex
	conns    map[*conn]struct{}
	closing  bool
	done     chan struct{} // closed by Shutdown
	inner    net.Listener
	handoff  *handoffListener
	served   atomic.Int64
	handedTo atomic.Int64
}

// Stats are the front's counts since it started.
type Stats struct {
	// Served is the requests the front answered itself.
	Served int64
	// HandedOff is the connections given to net/http.
	HandedOff int64
}

// Stats reads the counts.
func (s *Server) Stats() Stats {
	return Stats{Served: s.served.Load(), HandedOff: s.handedTo.Load()}
}

// The front reads a request's head into a buffer of this size: a head
// that does not fit is handed to net/http (browsers send 0.5–2 KB).
const headBufferSize = 8 << 10

// maxHeaders bounds the header lines of a request the front reads; more
// go to net/http.
const maxHeaders = 64

// Serve accepts connections on ln until Shutdown, serving them as the
// package comment says. It returns http.ErrServerClosed after Shutdown,
// else the accept error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.done == nil {
		s.done = make(chan struct{})
	}
	s.inner = ln
	s.handoff = &handoffListener{addr: ln.Addr(), conns: make(chan net.Conn), done: s.done, closed: make(chan struct{})}
	s.conns = map[*conn]struct{}{}
	closing := s.closing
	s.mu.Unlock()
	if closing {
		_ = ln.Close()
		return http.ErrServerClosed
	}
	httpDone := make(chan error, 1)
	go func() { httpDone <- s.HTTP.Serve(s.handoff) }()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.shuttingDown() {
				<-httpDone
				return http.ErrServerClosed
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does; anything else ends Serve.
			var te interface{ Temporary() bool }
			if !errors.As(err, &te) || !te.Temporary() {
				_ = s.handoff.Close()
				<-httpDone
				return err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			if s.Logger != nil {
				s.Logger.Warn("http: accept failed; retrying", "error", err, "in", delay)
			}
			time.Sleep(delay)
			continue
		}
		delay = 0
		cc := &conn{srv: s, rwc: c}
		if !s.track(cc, true) {
			_ = c.Close()
			continue
		}
		go cc.serve()
	}
}

func (s *Server) shuttingDown() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// track adds or removes a connection; adding fails once shutting down.
func (s *Server) track(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// Shutdown stops accepting, closes idle connections and waits for the
// requests in flight (the front's and net/http's) until ctx ends, then
// closes what is left, as http.Server.Shutdown does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.done == nil {
		s.done = make(chan struct{})
	}
	if !s.closing {
		s.closing = true
		close(s.done)
	}
	inner := s.inner
	s.mu.Unlock()
	if inner != nil {
		_ = inner.Close()
	}
	httpErr := make(chan error, 1)
	go func() { httpErr <- s.HTTP.Shutdown(ctx) }()
	err := s.drain(ctx)
	if herr := <-httpErr; err == nil {
		err = herr
	}
	return err
}

// drain closes idle connections until none is left, or every one when
// ctx ends.
func (s *Server) drain(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !s.closeIdle() {
		select {
		case <-ctx.Done():
			s.closeAll()
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// closeIdle closes the connections waiting for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.state.Load() == stateIdle {
			_ = c.rwc.Close()
			delete(s.conns, c)
		}
	}
	return len(s.conns) == 0
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.rwc.Close()
		delete(s.conns, c)
	}
}

func (s *Server) fast(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodOptions:
		return s.Route(method, path)
	}
	return false
}

// A connection's states, for Shutdown: idle between requests, active
// while a request is read or answered.
const (
	stateIdle int32 = iota
	stateActive
)

type conn struct {
	srv        *Server
	rwc        net.Conn
	state      atomic.Int32
	remoteAddr string
	br         *bufio.Reader
	w          response
	head       http.Header
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, headBufferSize) }}

// serve answers the connection's requests until it closes or is handed
// over.
func (c *conn) serve() {
	c.remoteAddr = c.rwc.RemoteAddr().String()
	c.br = readers.Get().(*bufio.Reader)
	c.br.Reset(c.rwc)
	handedOff := false
	defer func() {
		// A handler's panic (the router recovers its own): logged
		// without the client's address, which holdco never logs.
		if rec := recover(); rec != nil && rec != http.ErrAbortHandler && c.srv.Logger != nil {
			c.srv.Logger.Error("http: panic serving a request", "panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
		}
		c.srv.track(c, false)
		if !handedOff {
			_ = c.rwc.Close()
		}
		c.br.Reset(nil)
		readers.Put(c.br)
	}()
	hs := c.srv.HTTP
	// A request's context has net/http's values and ends when its
	// handler returns, as net/http's does.
	base := context.WithValue(context.WithValue(context.Background(), http.ServerContextKey, hs), http.LocalAddrContextKey, c.rwc.LocalAddr())
	lastMethod := ""
	accepted := time.Now()
	for first := true; ; first = false {
		// The first request's head has the header timeout from the
		// connection's start; a later one waits the idle timeout for its
		// first bytes, then has the header timeout: as net/http waits.
		c.state.Store(stateIdle)
		if c.srv.shuttingDown() {
			return
		}
		if first {
			c.setReadDeadlineFrom(accepted, headTimeout(hs))
		} else if hs.IdleTimeout > 0 {
			c.setReadDeadline(hs.IdleTimeout)
		} else {
			c.setReadDeadline(headTimeout(hs))
		}
		// net/http waits for 4 bytes between requests (fewer, then the
		// end, close the connection unanswered), and after a POST skips
		// up to 4 CR or LF an old client may add after the body.
		want := 1
		if !first {
			want = 4
		}
		if _, err := c.br.Peek(want); err != nil {
			return
		}
		if lastMethod == http.MethodPost {
			peek, _ := c.br.Peek(4)
			_, _ = c.br.Discard(leadingCRorLF(peek))
		}
		start := accepted
		if !first {
			start = time.Now()
			c.setReadDeadlineFrom(start, headTimeout(hs))
		}
		if hs.WriteTimeout > 0 {
			_ = c.rwc.SetWriteDeadline(start.Add(hs.WriteTimeout))
		}
		ctx, cancel := context.WithCancel(base)
		req, n, verdict := c.readHead(ctx)
		if verdict != headFast {
			cancel()
			if verdict == headHandOff {
				handedOff = c.handOff()
			}
			return // or a timeout: closed without an answer, as net/http does
		}
		// Busy from its whole head on (Shutdown closes a connection with
		// half a head, as net/http does).
		if !c.activate() {
			cancel()
			return
		}
		if hs.ReadTimeout > 0 {
			_ = c.rwc.SetReadDeadline(start.Add(hs.ReadTimeout))
		}
		body := c.readBody(n, req.ContentLength)
		req.Body = body
		if req.ContentLength == 0 {
			req.Body = http.NoBody
		}
		lastMethod = req.Method
		c.w.reset(req)
		hs.Handler.ServeHTTP(&c.w, req)
		cancel()
		// A body cut short (the handler read what came, then the
		// error, as from net/http) ends the connection after the answer,
		// as does shutting down. The answer says so, as net/http's does,
		// unless the client ended its side.
		cut := body.err != nil
		say := c.srv.shuttingDown() || cut && body.err != io.ErrUnexpectedEOF
		body.release()
		c.srv.served.Add(1)
		if c.srv.OnServe != nil {
			c.srv.OnServe()
		}
		if !c.w.finish(c.rwc, say) || cut {
			return
		}
	}
}

func leadingCRorLF(b []byte) int {
	n := 0
	for _, c := range b {
		if c != '\r' && c != '\n' {
			break
		}
		n++
	}
	return n
}

// activate marks the connection busy, unless the server is closing it.
func (c *conn) activate() bool {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	if c.srv.closing {
		return false
	}
	c.state.Store(stateActive)
	return true
}

func headTimeout(hs *http.Server) time.Duration {
	if hs.ReadHeaderTimeout > 0 {
		return hs.ReadHeaderTimeout
	}
	return hs.ReadTimeout
}

func (c *conn) setReadDeadline(d time.Duration) {
	if d > 0 {
		_ = c.rwc.SetReadDeadline(time.Now().Add(d))
	} else {
		_ = c.rwc.SetReadDeadline(time.Time{})
	}
}

func (c *conn) setReadDeadlineFrom(t time.Time, d time.Duration) {
	if d > 0 {
		_ = c.rwc.SetReadDeadline(t.Add(d))
	}
}

// handOff gives the connection, with what was read of it, to net/http;
// false when the server is closing (the caller closes it).
func (c *conn) handOff() bool {
	pending := c.br.Buffered()
	var rest []byte
	if pending > 0 {
		b, _ := c.br.Peek(pending)
		rest = bytes.Clone(b)
	}
	_ = c.rwc.SetDeadline(time.Time{})
	hc := &handoffConn{Conn: c.rwc, pending: rest}
	if !c.srv.handoff.give(hc) {
		return false
	}
	c.srv.handedTo.Add(1)
	if c.srv.OnHandOff != nil {
		c.srv.OnHandOff()
	}
	return true
}

// What readHead found.
const (
	headFast    = iota // a request the front serves
	headHandOff        // anything else, or a read that failed early (net/http reads the same bytes and answers)
	headFailed         // the read timed out: the connection closes
)

// readHead reads a request head the front serves, leaving its bytes in
// the reader; n is the head's length.
func (c *conn) readHead(ctx context.Context) (req *http.Request, n int, verdict int) {
	var head []byte
	// The request line is judged once, when it is whole; the head's end
	// is looked for in what came since the last look.
	lineJudged, scanned := false, 0
	for {
		buf, _ := c.br.Peek(c.br.Buffered())
		if !lineJudged {
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				if !c.fastLine(buf[:i]) {
					return nil, 0, headHandOff
				}
				lineJudged = true
			}
		}
		if lineJudged {
			if i := bytes.Index(buf[scanned:], crlfcrlf); i >= 0 {
				head = buf[:scanned+i+4]
				break
			}
			scanned = max(0, len(buf)-len(crlfcrlf)+1)
		}
		if len(buf) == headBufferSize {
			return nil, 0, headHandOff
		}
		// More of the head: wait for at least one more byte.
		if _, err := c.br.Peek(len(buf) + 1); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return nil, 0, headFailed
			}
			return nil, 0, headHandOff
		}
	}
	if c.head == nil {
		c.head = make(http.Header, 8)
	}
	req, ok := parseHead(ctx, head, c.head)
	// Only a POST's body is read by the front (net/http answers a GET
	// without reading one).
	if !ok || !c.srv.fast(req.Method, req.URL.Path) || req.ContentLength > c.srv.MaxBody ||
		req.Method != http.MethodPost && req.ContentLength != 0 {
		return nil, 0, headHandOff
	}
	req.RemoteAddr = c.remoteAddr
	return req, len(head), headFast
}

// fastLine reports whether a request line (without its LF) can be one
// the front serves, so that any other connection is handed over at its
// first line.
func (c *conn) fastLine(line []byte) bool {
	line = bytes.TrimSuffix(line, cr)
	method, rest, ok := bytes.Cut(line, sp)
	if !ok {
		return false
	}
	target, _, _ := bytes.Cut(rest, sp)
	path, _, _ := bytes.Cut(target, question)
	return c.srv.fast(string(method), string(path))
}

var crlfcrlf = []byte("\r\n\r\n")

// readBody reads the request's body (its head first), n bytes of head
// and length of body. A body cut short keeps what came and the read's
// error, which the handler reads after it, as from net/http's body.
func (c *conn) readBody(n int, length int64) *body {
	_, _ = c.br.Discard(n) // buffered: Peek has it
	b := bodies.Get().(*body)
	b.buf, b.err = b.buf[:0], nil
	// The buffer grows as the body comes (a client that announces 1 MiB
	// and sends nothing holds no more than the pooled buffer).
	for int64(len(b.buf)) < length && b.err == nil {
		if len(b.buf) == cap(b.buf) {
			b.buf = slices.Grow(b.buf, int(min(length, int64(2*cap(b.buf)+512)))-len(b.buf))
		}
		end := int(min(length, int64(cap(b.buf))))
		n, err := c.br.Read(b.buf[len(b.buf):end])
		b.buf = b.buf[:len(b.buf)+n]
		if err != nil {
			b.err = err
		}
	}
	if b.err == io.EOF {
		b.err = io.ErrUnexpectedEOF // as net/http's body answers a short one
	}
	b.r.Reset(b.buf)
	return b
}

// body is a request's body, read before the handler runs.
type body struct {
	buf []byte
	r   bytes.Reader
	err error // after buf: the body was cut short
}

var bodies = sync.Pool{New: func() any { return &body{buf: make([]byte, 0, 4<<10)} }}

// maxPooledBody bounds the bodies kept for the next request.
const maxPooledBody = 64 << 10

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}
func (b *body) Close() error { return nil }

func (b *body) release() {
	b.r.Reset(nil)
	if cap(b.buf) <= maxPooledBody {
		bodies.Put(b)
	}
}

// parseHead reads a request head (ending in CRLF CRLF) as net/http would,
// or answers false for anything the front leaves to net/http. The header
// map h is reused by the connection: it is cleared and filled.
func parseHead(ctx context.Context, head []byte, h http.Header) (*http.Request, bool) {
	line, rest, _ := bytes.Cut(head, crlf)
	method, line, ok1 := bytes.Cut(line, sp)
	target, proto, ok2 := bytes.Cut(line, sp)
	if !ok1 || !ok2 || string(proto) != "HTTP/1.1" || len(target) == 0 || target[0] != '/' {
		return nil, false
	}
	path, query, hasQuery := bytes.Cut(target, question)
	if !plainPath(path) || !plainQuery(query) {
		return nil, false
	}
	clear(h)
	var host []byte
	hosts, lengths := 0, 0
	length := int64(0)
	closeAfter := false
	for lines := 0; ; lines++ {
		var l []byte
		l, rest, _ = bytes.Cut(rest, crlf)
		if len(l) == 0 {
			break
		}
		if lines == maxHeaders {
			return nil, false
		}
		name, value, ok := bytes.Cut(l, colon)
		if !ok || !token(name) {
			return nil, false
		}
		value = trimOWS(value)
		if !plainValue(value) {
			return nil, false
		}
		key := canonicalKey(name)
		switch key {
		case "Host":
			hosts++
			host = value
			continue // net/http keeps the host in Request.Host, not in the header
		case "Content-Length":
			lengths++
			n, ok := contentLength(value)
			if !ok {
				return nil, false
			}
			length = n
		case "Connection":
			switch {
			case asciiEqualFold(value, "close"):
				closeAfter = true
			case asciiEqualFold(value, "keep-alive"):
			default:
				return nil, false // upgrade and other tokens: net/http's
			}
		case "Transfer-Encoding", "Expect", "Upgrade", "Trailer", "Te":
			return nil, false
		}
		h[key] = append(h[key], string(value))
	}
	// No Content-Length (and no Transfer-Encoding) is an empty body.
	if hosts != 1 || !plainHost(host) || lengths > 1 {
		return nil, false
	}
	u := &url.URL{Path: string(path)}
	if hasQuery {
		u.RawQuery = string(query)
		u.ForceQuery = len(query) == 0
	}
	req := http.Request{
		Method:        methodName(method),
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		ContentLength: length,
		Close:         closeAfter,
		Host:          string(host),
		RequestURI:    string(target),
	}
	return req.WithContext(ctx), true
}

// methodName is the method's string, without an allocation for the
// front's methods (fast checks it is one of them).
func methodName(m []byte) string {
	for _, s := range []string{http.MethodGet, http.MethodPost, http.MethodOptions} {
		if string(m) == s {
			return s
		}
	}
	return string(m)
}

var (
	crlf     = []byte("\r\n")
	cr       = []byte("\r")
	sp       = []byte(" ")
	question = []byte("?")
	colon    = []byte(":")
)

// plainPath is a path of the characters a URL path holds unescaped: no
// percent-escapes (the front's paths have none, and another spelling of
// them goes to net/http, which unescapes it).
func plainPath(p []byte) bool {
	for _, c := range p {
		// What net/url keeps unescaped in a path (so URL.RawPath stays
		// empty, as net/http leaves it): not ! ' ( ) *.
		if !(isUnreserved(c) || bytes.IndexByte(pathPunct, c) >= 0) {
			return false
		}
	}
	return true
}

var pathPunct = []byte("/:@$&+,;=")

// plainQuery is a query (after its "?") of RFC 3986 query characters,
// percent-escapes well formed.
func plainQuery(q []byte) bool {
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case isUnreserved(c) || isSubDelim(c) || c == ':' || c == '@' || c == '/' || c == '?':
		case c == '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// plainHost is a host[:port] of letters, digits, '-', '.', and a port:
// anything else (brackets, user info, escapes) goes to net/http's checks.
func plainHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool {
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// token is an RFC 9110 token (a header name).
func token(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || bytes.IndexByte(tokenPunct, c) >= 0) {
			return false
		}
	}
	return true
}

var tokenPunct = []byte("!#$%&'*+-.^_`|~")

// plainValue is a header value of visible ASCII and inner spaces or tabs
// (obs-text and controls go to net/http).
func plainValue(v []byte) bool {
	for _, c := range v {
		if !(c >= 0x20 && c < 0x7f || c == '\t') {
			return false
		}
	}
	return true
}

func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// contentLength reads a Content-Length of 1 to 10 digits, no sign and
// no leading zero.
func contentLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 10 || (v[0] == '0' && len(v) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func asciiEqualFold(b []byte, s string) bool {
	return len(b) == len(s) && bytes.EqualFold(b, []byte(s))
}

// commonKeys are the canonical names of the headers browsers send, so
// the usual ones cost no allocation.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Cache-Control", "Connection", "Content-Encoding",
		"Content-Length", "Content-Type", "Cookie", "Dnt", "Host", "Origin", "Pragma", "Priority", "Referer", "Sec-Ch-Ua",
		"Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Sec-Gpc",
		"Transfer-Encoding", "Expect", "Upgrade", "Trailer", "Te", "User-Agent", "X-Forwarded-For", "X-Forwarded-Proto",
		"X-Real-Ip", "X-Request-Id", "Traceparent", "Tracestate", "Authorization"} {
		m[k] = k
	}
	return m
}()

// canonicalKey is textproto.CanonicalMIMEHeaderKey of a token.
func canonicalKey(name []byte) string {
	var buf [64]byte
	if len(name) > len(buf) {
		return http.CanonicalHeaderKey(string(name))
	}
	upper := true
	for i, c := range name {
		switch {
		case upper && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case !upper && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[i] = c
		upper = c == '-'
	}
	k := buf[:len(name)]
	if s, ok := commonKeys[string(k)]; ok {
		return s
	}
	return string(k)
}

// response is the front's http.ResponseWriter: the handler's answer is
// gathered and written in one call, as net/http writes a small answer.
// The head is fixed when the status is (WriteHeader), as net/http's is:
// headers set later are not sent.
type response struct {
	req         *http.Request
	header      http.Header
	status      int
	wroteHeader bool
	// head is the status line and the handler's headers as of
	// WriteHeader; the flags say what of the front's own to add.
	head                                        []byte
	hasType, hasEncoding, hasDate, handlerClose bool
	// connection is the handler's Connection header: sent as it is
	// unless the front closes a connection it did not say close for.
	connection []string
	body       []byte
}

func (w *response) reset(req *http.Request) {
	w.req = req
	if w.header == nil {
		w.header = make(http.Header, 8)
	}
	clear(w.header)
	w.status, w.wroteHeader = 0, false
	w.body = w.body[:0]
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader || code < 200 { // 1xx informational answers are not sent by the front
		return
	}
	w.wroteHeader, w.status = true, code
	head := w.head[:0]
	head = append(head, "HTTP/1.1 "...)
	head = strconv.AppendInt(head, int64(code), 10)
	head = append(head, ' ')
	if text := http.StatusText(code); text != "" {
		head = append(head, text...)
	} else {
		head = append(head, "status code "...)
		head = strconv.AppendInt(head, int64(code), 10)
	}
	head = append(head, "\r\n"...)
	var few [16]string
	keys := few[:0]
	for k := range w.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		// The front's own (below, at finish); what net/http leaves out
		// of a 304; names net/http would not send.
		if k == "Content-Length" || k == "Transfer-Encoding" || k == "Connection" || !httpguts.ValidHeaderFieldName(k) ||
			code == http.StatusNotModified && k == "Content-Type" {
			continue
		}
		for _, v := range w.header[k] {
			head = append(head, k...)
			head = append(head, ": "...)
			head = appendHeaderValue(head, v)
			head = append(head, "\r\n"...)
		}
	}
	w.head = head
	_, w.hasType = w.header["Content-Type"]
	w.hasEncoding = w.header.Get("Content-Encoding") != ""
	_, w.hasDate = w.header["Date"]
	w.connection = append(w.connection[:0], w.header["Connection"]...)
	w.handlerClose = httpguts.HeaderValuesContainsToken(w.connection, "close")
}

func (w *response) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.body = append(w.body, b...)
	return len(b), nil
}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// finish writes the answer, the way net/http's would read to a client:
// the handler's headers, Date, Content-Length, a sniffed Content-Type
// when none was set, Connection: close when the connection ends. It
// reports whether the connection serves another request.
func (w *response) finish(c net.Conn, closing bool) bool {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	// The handler's Connection: close is sent as it is; otherwise the
	// front says it when it closes.
	keep := !w.req.Close && !closing && !w.handlerClose
	out := w.head
	if !w.hasDate {
		out = append(out, "Date: "...)
		out = appendDate(out)
		out = append(out, "\r\n"...)
	}
	if bodyAllowed(w.status) {
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, int64(len(w.body)), 10)
		out = append(out, "\r\n"...)
		if !w.hasType && !w.hasEncoding && len(w.body) > 0 {
			out = append(out, "Content-Type: "...)
			out = append(out, http.DetectContentType(w.body)...)
			out = append(out, "\r\n"...)
		}
	}
	if keep || w.handlerClose {
		for _, v := range w.connection {
			out = append(out, "Connection: "...)
			out = appendHeaderValue(out, v)
			out = append(out, "\r\n"...)
		}
	} else {
		out = append(out, "Connection: close\r\n"...)
	}
	out = append(out, "\r\n"...)
	out = append(out, w.body...)
	w.head = out
	if cap(w.head) > maxPooledBody {
		w.head = nil
	}
	if cap(w.body) > maxPooledBody {
		w.body = nil
	}
	w.req = nil
	_, err := c.Write(out)
	return err == nil && keep
}

// appendHeaderValue writes v as net/http does: line breaks become
// spaces, then spaces and tabs around it are dropped.
func appendHeaderValue(out []byte, v string) []byte {
	if strings.ContainsAny(v, "\r\n") {
		v = newlineToSpace.Replace(v)
	}
	return append(out, strings.Trim(v, " \t")...)
}

var newlineToSpace = strings.NewReplacer("\r", " ", "\n", " ")

// The Date header, formatted once a second.
var dateCache struct {
	mu   sync.Mutex
	sec  int64
	text []byte
}

func appendDate(out []byte) []byte {
	now := time.Now()
	dateCache.mu.Lock()
	defer dateCache.mu.Unlock()
	if sec := now.Unix(); sec != dateCache.sec {
		dateCache.sec = sec
		dateCache.text = now.UTC().AppendFormat(dateCache.text[:0], http.TimeFormat)
	}
	return append(out, dateCache.text...)
}

// handoffListener is the listener net/http serves: the connections the
// front hands over.
type handoffListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	// closed is closed by Close (net/http's Shutdown closes its listener).
	closed chan struct{}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// give passes c to net/http; false once the listener is closed.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// A handed-off connection keeps what net/http uses of a *net.TCPConn.
var (
	_ io.ReaderFrom                   = (*handoffConn)(nil)
	_ interface{ CloseWrite() error } = (*handoffConn)(nil)
)

// handoffConn is a connection net/http reads from the first byte the
// front had read.
type handoffConn struct {
	net.Conn
	pending []byte
}

func (c *handoffConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// ReadFrom keeps net/http's sendfile and splice for the connections it
// was handed (a *net.TCPConn's ReadFrom).
func (c *handoffConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite lets net/http half-close the connection after an error
// answer, as it does a *net.TCPConn.
func (c *handoffConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
