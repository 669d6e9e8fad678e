package main

import (
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// throughput sends n GET requests with conc clients and returns the
// requests per second answered 200.
func throughput(u, bearer string, n, conc int, rep *report) float64 {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next, ok, bad atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequest("GET", u, nil)
				req.Header.Set("Authorization", "Bearer "+bearer)
				resp, err := hc.Do(req)
				if err != nil {
					bad.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if bad.Load() > 0 {
		rep.fail("throughput pass: %d of %d requests not answered 200", bad.Load(), n)
	}
	rps := float64(ok.Load()) / el.Seconds()
	log.Printf("throughput: %d requests, %d clients, %s: %.0f req/s", n, conc, el.Round(time.Millisecond), rps)
	return rps
}

// loadAverage is the machine's one-minute load average (/proc/loadavg),
// printed with the throughput: other work on the CPUs skews it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
