package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

// tcpProxy forwards a local port to a database; cut drops every
// connection and refuses new ones (the database is down), restore lets
// them through again.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				_ = c.Close()
				continue
			}
			d, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(d, c); _ = d.Close() }()
			go func() { _, _ = io.Copy(c, d); _ = c.Close() }()
		}
	}()
	return p
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// A Postgres outage: requests answer 503 with Retry-After (not 500),
// capture too (nothing is acknowledged that is not stored), the router
// logs the outage once, and everything answers again once it is back.
func TestDatabaseOutageAnswers503WithRetryAfter(t *testing.T) {
	dsn := testenv.DatabaseURL(t)
	if dsn == "" {
		t.Skip("the outage is a TCP proxy in front of Postgres cut and restored: set " + testenv.DatabaseURLEnv)
	}
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	ctx := context.Background()
	st, err := store.Open(ctx, u.String(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	w := newWorldOn(t, st, usecases.Options{})
	key := w.analyticsKey()
	capture := func(id string) *http.Response {
		body := `{"api_key":"` + key + `","event":"$pageview","distinct_id":"` + id + `"}`
		return w.post("/analytics/e/", "application/json", strings.NewReader(body), nil).Result()
	}
	require.Equal(t, http.StatusOK, capture("before").StatusCode)
	w.call(http.MethodGet, "/companies/"+w.adaCo, pat, "", http.StatusOK, nil)

	proxy.cut()
	for i := range 20 {
		rec := w.do(http.MethodGet, "/companies/"+w.adaCo, pat, "")
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, "request %d: %s", i, rec.Body.String())
		assert.Equal(t, "5", rec.Header().Get("Retry-After"))
		var body map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Equal(t, string(models.CodeUpstreamUnavailable), body["error"])
	}
	for i := range 5 {
		resp := capture("during")
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "capture %d", i)
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	}
	logs := w.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "level=ERROR"), "one line per outage:\n%s", logs)
	assert.Contains(t, logs, "database unavailable: requests answer 503")
	assert.NotContains(t, logs, "request failed", "no per-request error lines")

	proxy.restore()
	require.Eventually(t, func() bool {
		return w.do(http.MethodGet, "/companies/"+w.adaCo, pat, "").Code == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "answers again once the database is back")
	require.Eventually(t, func() bool { return capture("after").StatusCode == http.StatusOK }, 60*time.Second, 100*time.Millisecond)
	w.svc.Analytics.Flush(ctx) // the inbox folded into the raw events

	sc, err := st.SystemCompanyScope(ctx, w.adaCo)
	require.NoError(t, err)
	raw, err := st.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	var ids []string
	for _, e := range raw {
		ids = append(ids, e.DistinctID)
	}
	assert.Equal(t, []string{"before", "after"}, ids, "nothing answered 503 was stored")
}
