// Command soak drives bounded mixed traffic at a running holdco (REST
// reads and writes, analytics capture, messages that start agent turns)
// for a number of minutes and samples the server process: resident
// memory, threads, open files, goroutines (go_goroutines from /metrics
// when the process serves it), Postgres connections, and each request
// class's p50/p99 latency and errors per sample period. scripts/soak.sh
// starts the server and this client.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

type class struct {
	mu      sync.Mutex
	lat     []time.Duration
	errs    int // 5xx or transport errors
	refused int // 4xx
}

func (c *class) add(d time.Duration, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lat = append(c.lat, d)
	switch {
	case status == 0 || status >= 500:
		c.errs++
	case status >= 400:
		c.refused++
	}
}

// take returns and resets the period's figures.
func (c *class) take() (n int, p50, p99 time.Duration, errs, refused int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lat
	c.lat, n, errs, refused = nil, len(l), c.errs, c.refused
	c.errs, c.refused = 0, 0
	if n == 0 {
		return
	}
	slices.Sort(l)
	return n, l[n/2], l[min(n-1, n*99/100)], errs, refused
}

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "REST API address")
	token := flag.String("token", os.Getenv("SOAK_TOKEN"), "bearer token (personal access token)")
	pid := flag.Int("pid", 0, "server process id to sample")
	minutes := flag.Float64("minutes", 30, "how long")
	sample := flag.Int("sample", 30, "seconds between samples")
	rate := flag.Int("rate", 20, "requests per second in all")
	database := flag.String("database", "", "postgres URL to count connections (empty: not counted)")
	out := flag.String("out", "samples.tsv", "samples file")
	flag.Parse()
	client := &http.Client{Timeout: 30 * time.Second}
	call := func(method, path, body string) (int, []byte, time.Duration) {
		req, _ := http.NewRequest(method, *base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if *token != "" && !strings.HasPrefix(path, "/analytics/") {
			req.Header.Set("Authorization", "Bearer "+*token)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, time.Since(start)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, b, time.Since(start)
	}
	var me struct {
		ConglomerateID string `json:"conglomerate_id"`
	}
	status, b, _ := call("GET", "/auth/me", "")
	if status != 200 || json.Unmarshal(b, &me) != nil {
		log.Fatalf("soak: GET /auth/me: %d %s", status, b)
	}
	var co struct {
		ID string `json:"id"`
	}
	status, b, _ = call("POST", "/conglomerates/"+me.ConglomerateID+"/companies", `{"name":"Soak Co","idea":"Sell maps to hikers"}`)
	if status != 201 || json.Unmarshal(b, &co) != nil {
		log.Fatalf("soak: create company: %d %s", status, b)
	}
	classes := map[string]*class{"rest_read": {}, "rest_write": {}, "capture": {}, "message": {}}
	names := []string{"rest_read", "rest_write", "capture", "message"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*minutes*float64(time.Minute)))
	defer cancel()
	// One request every 1/rate s, spread over the classes: reads 50%,
	// writes 20%, capture 28%, messages 2% (each starts a turn).
	go func() {
		tick := time.NewTicker(time.Second / time.Duration(*rate))
		defer tick.Stop()
		sem := make(chan struct{}, 32) // bounded concurrency
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				continue // the server is behind: no pile-up
			}
			go func(i int) {
				defer func() { <-sem }()
				r := rand.IntN(100)
				var name, method, path, body string
				switch {
				case r < 50:
					name, method = "rest_read", "GET"
					path = []string{"/auth/me", "/conglomerates/" + me.ConglomerateID + "/companies", "/companies/" + co.ID, "/companies/" + co.ID + "/tasks"}[i%4]
				case r < 70:
					name, method, path = "rest_write", "POST", "/companies/"+co.ID+"/prospects"
					body = fmt.Sprintf(`{"name":"Lead %d"}`, i)
				case r < 98:
					name, method, path = "capture", "POST", "/analytics/e/"
					body = fmt.Sprintf(`{"api_key":"hca_soakunknownkey000000","event":"$pageview","distinct_id":"v%d","properties":{"$current_url":"http://soak.test/p%d"}}`, i%500, i%20)
				default:
					name, method, path = "message", "POST", "/companies/"+co.ID+"/messages"
					body = `{"message":"How is it going?"}`
				}
				s, _, d := call(method, path, body)
				classes[name].add(d, s)
			}(i)
		}
	}()

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	header := "minute\trss_mb\tthreads\tfds\tgoroutines\tpg_conns"
	for _, n := range names {
		header += fmt.Sprintf("\t%s_n\t%s_p50_ms\t%s_p99_ms\t%s_5xx\t%s_4xx", n, n, n, n, n)
	}
	fmt.Fprintln(f, header)
	fmt.Println(header)
	start := time.Now()
	tick := time.NewTicker(time.Duration(*sample) * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		row := fmt.Sprintf("%.1f\t%s\t%s\t%s\t%s\t%s", time.Since(start).Minutes(), rssMB(*pid), procField(*pid, "Threads"), fds(*pid), goroutines(client, *base), pgConns(*database))
		for _, n := range names {
			k, p50, p99, errs, refused := classes[n].take()
			row += fmt.Sprintf("\t%d\t%.1f\t%.1f\t%d\t%d", k, ms(p50), ms(p99), errs, refused)
		}
		fmt.Fprintln(f, row)
		fmt.Println(row)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func procField(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "-"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.Fields(v)[0]
		}
	}
	return "-"
}

func rssMB(pid int) string {
	kb, err := strconv.Atoi(procField(pid, "VmRSS"))
	if err != nil {
		return "-"
	}
	return strconv.Itoa(kb / 1024)
}

func fds(pid int) string {
	e, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return "-"
	}
	return strconv.Itoa(len(e))
}

var goroutineLine = regexp.MustCompile(`(?m)^go_goroutines\s+([0-9.e+]+)`)

// goroutines reads go_goroutines off the process's Prometheus metrics
// when it serves them ("-" otherwise).
func goroutines(c *http.Client, base string) string {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return "-"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if m := goroutineLine.FindSubmatch(b); resp.StatusCode == 200 && m != nil {
		f, _ := strconv.ParseFloat(string(m[1]), 64)
		return strconv.Itoa(int(f))
	}
	return "-"
}

func pgConns(url string) string {
	if !strings.HasPrefix(url, "postgres") {
		return "-"
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return "-"
	}
	defer db.Close()
	var n int
	// Connections to this database other than the query's own.
	if err := db.QueryRow(`SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()`).Scan(&n); err != nil {
		return "-"
	}
	return strconv.Itoa(n)
}
