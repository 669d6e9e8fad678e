package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Server serves an in-memory S3-protocol store (gofakes3, the store
// the blob adapter's tests use) over HTTP with one bucket.
func s3Server(bucket string) (*httptest.Server, error) {
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		return nil, err
	}
	return httptest.NewServer(gofakes3.New(backend).Server()), nil
}

// proxy is a round-robin reverse proxy over some backends, as a load
// balancer in front of replicas: a backend marked down (what a balancer's
// health check would see after a kill) gets no new requests; requests in
// flight to a killed backend fail with 502, which the driver reads as
// not acknowledged.
type proxy struct {
	name     string
	backends []*url.URL
	proxies  []*httputil.ReverseProxy
	mu       sync.Mutex
	up       []bool
	next     uint64
	served   []atomic.Int64
	srv      *http.Server
	url      string
}

func newProxy(name string, backends []string) (*proxy, error) {
	p := &proxy{name: name, up: make([]bool, len(backends)), served: make([]atomic.Int64, len(backends))}
	for i, b := range backends {
		u, err := url.Parse("http://" + b)
		if err != nil {
			return nil, err
		}
		p.backends = append(p.backends, u)
		rp := httputil.NewSingleHostReverseProxy(u)
		// The Host header stays the public one the client used, as a
		// balancer in front of replicas passes it.
		//lint:ignore SA1019 the Director's X-Forwarded-For handling is what make scale-test's figures were measured with
		director := rp.Director
		//lint:ignore SA1019 as above
		rp.Director = func(r *http.Request) {
			host := r.Host
			director(r)
			r.Host = host
		}
		rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
		rp.ErrorLog = nil
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "scaletest proxy: backend "+u.Host+": "+err.Error(), http.StatusBadGateway)
		}
		p.proxies = append(p.proxies, rp)
		p.up[i] = true
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.url = "http://" + l.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *proxy) setUp(i int, up bool) {
	p.mu.Lock()
	p.up[i] = up
	p.mu.Unlock()
}

// only leaves backend i alone up (or every backend with i < 0).
func (p *proxy) only(i int) {
	p.mu.Lock()
	for j := range p.up {
		p.up[j] = i < 0 || j == i
	}
	p.mu.Unlock()
}

func (p *proxy) pick() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.up {
		i := int(p.next % uint64(len(p.up)))
		p.next++
		if p.up[i] {
			return i
		}
	}
	return -1
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := p.pick()
	if i < 0 {
		http.Error(w, "scaletest proxy: no backend up", http.StatusServiceUnavailable)
		return
	}
	p.served[i].Add(1)
	p.proxies[i].ServeHTTP(w, r)
}

func (p *proxy) close() { _ = p.srv.Close() }
