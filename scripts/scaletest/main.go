// Command scaletest (`make scale-test`) runs holdco as a cluster on one
// machine and drives it as a user: the binary built once, a standalone
// Temporal development server (`holdco temporal`), an S3-protocol store
// (gofakes3, in this process), a fresh Postgres database, 2 API
// processes (roles api, mcp, oauth), 2 workers and 2 sites processes,
// each an OS process with a data directory of its own, behind small
// round-robin proxies. It creates companies through both APIs, commits
// to their sites through the connector, heals them, uploads and
// downloads files across the APIs, sends messages whose turns run on the
// workers, kills -9 one worker and one API process mid-run and restarts
// them, then asserts: every site served identically by every sites
// process, no repository forked, every file downloadable everywhere,
// every turn charged once, nothing acknowledged lost. It ends with a
// figure summary and the throughput of 1 vs 2 API processes.
//
// It also checks issue 27's cluster items: sign-in through the
// round-robin proxy, a commit through the connector of a process
// without the worker, every limit counted once per cluster and each
// background sweep run by one process (the sweep lease metric of every
// process and the leases table). Any failed check fails the run.
// docs/scaling.md describes the run.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"holdco/scripts/internal/harness"
)

var (
	nCompanies = flag.Int("companies", 6, "companies to create (half through each API process)")
	turnsPer   = flag.Int("turns", 2, "messages (agent turns) per company")
	filesPer   = flag.Int("files", 2, "files uploaded per company (through each API process)")
	pgAdmin    = flag.String("pg", envOr("SCALE_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "Postgres where a fresh database is created and dropped")
	binFlag    = flag.String("bin", "", "holdco binary to run (default: go build ./cmd/holdco into the work directory)")
	keep       = flag.Bool("keep", false, "keep the work directory (data directories and logs) and the database")
	tpRequests = flag.Int("throughput-requests", 3000, "GET /auth/me requests per throughput pass")
	tpConc     = flag.Int("throughput-concurrency", 16, "concurrent clients of the throughput passes")
	bound      = flag.Duration("bound", 6*time.Minute, "generous bound on each eventual condition (provisioning, turns, deploys)")
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// report collects the checks: a failure fails the run.
type report struct {
	mu       sync.Mutex
	failures []string
	notes    []string
}

func (r *report) fail(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	r.failures = append(r.failures, msg)
	log.Printf("FAIL: %s", msg)
}

func (r *report) note(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	r.notes = append(r.notes, msg)
	log.Printf("note: %s", msg)
}

type company struct {
	ID, Handle, Name string
	via              int // the API process it was created through
	files            []file
}

type file struct {
	ID, Path string
	content  []byte
	via      int
}

type turn struct {
	ID, CompanyID, Subject string
}

type cluster struct {
	work       string
	bin        string
	dbURL      string
	dbName     string
	temporal   *harness.Proc
	apis       []*harness.Proc
	workers    []*harness.Proc
	sites      []*harness.Proc
	apiAddrs   []string
	mcpAddrs   []string
	oauthAddr  []string
	siteAddrs  []string
	apiProxy   *proxy
	mcpProxy   *proxy
	oauthPx    *proxy
	sitesPx    *proxy
	repoDir    string
	env        map[string]string
	companyDBs []string
}

func (c *cluster) all() []*harness.Proc {
	out := []*harness.Proc{}
	out = append(out, c.apis...)
	out = append(out, c.workers...)
	out = append(out, c.sites...)
	return out
}

func main() {
	log.SetFlags(log.Ltime)
	flag.Parse()
	start := time.Now()
	rep := &report{}
	code := runTest(rep)
	log.Printf("run time: %s", time.Since(start).Round(time.Second))
	os.Exit(code)
}

func runTest(rep *report) int {
	ctx := context.Background()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)

	// Postgres: skip, saying so, when it does not answer.
	admin, err := sql.Open("pgx", *pgAdmin)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = admin.PingContext(pctx)
		cancel()
	}
	if err != nil {
		fmt.Printf("scale-test skipped: Postgres does not answer at %s (%v); start one or set SCALE_PG_ADMIN_URL\n", redact(*pgAdmin), err)
		return 0
	}
	defer admin.Close()

	c := &cluster{}
	c.work, err = os.MkdirTemp("", "holdco-scale-")
	if err != nil {
		log.Print(err)
		return 1
	}
	log.Printf("work directory (data directories and logs): %s", c.work)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	c.dbName = "holdco_scale_" + hex.EncodeToString(suffix)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+c.dbName); err != nil {
		log.Printf("create database: %v", err)
		return 1
	}
	c.dbURL = withDatabase(*pgAdmin, c.dbName)
	failed := true
	defer func() {
		c.shutdown()
		if *keep || failed {
			log.Printf("kept: %s and database %s", c.work, c.dbName)
			return
		}
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + c.dbName + " WITH (FORCE)"); err != nil {
			log.Printf("drop database %s: %v", c.dbName, err)
		}
		// Per-company databases and roles the workers made for this run.
		dropCompanyDatabases(admin, c.companyDBs)
		_ = os.RemoveAll(c.work)
	}()

	// Interrupted: stop the cluster (its processes are in groups of their
	// own) before leaving.
	go func() {
		<-sigs
		log.Printf("interrupted: stopping the cluster; %s and database %s are kept", c.work, c.dbName)
		c.shutdown()
		os.Exit(130)
	}()
	if err := c.build(ctx); err != nil {
		log.Print(err)
		return 1
	}
	s3, err := s3Server("holdco")
	if err != nil {
		log.Print(err)
		return 1
	}
	defer s3.Close()
	if err := c.start(ctx, s3.URL); err != nil {
		log.Print(err)
		return 1
	}
	db, err := sql.Open("pgx", c.dbURL)
	if err != nil {
		log.Print(err)
		return 1
	}
	defer db.Close()
	peak := samplePostgres(ctx, admin, c.dbName)

	f := &figures{}
	if err := drive(ctx, c, db, rep, f); err != nil {
		rep.fail("%v", err)
	}
	f.pgPeak = peak()
	c.companyDBs = companyDatabases(db)
	f.print(c, rep)
	if len(rep.failures) > 0 {
		fmt.Printf("\nscale-test FAILED (%d): logs kept in %s\n", len(rep.failures), c.work)
		for _, m := range rep.failures {
			fmt.Println("  - " + m)
		}
		return 1
	}
	failed = false
	fmt.Println("\nscale-test passed")
	return 0
}

func withDatabase(u, name string) string {
	i := strings.LastIndex(u, "/")
	q := ""
	if j := strings.Index(u[i:], "?"); j >= 0 {
		q = u[i+j:]
	}
	return u[:i+1] + name + q
}

func redact(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j > 0 && strings.Contains(u[j+3:i], ":") {
			return u[:j+3] + "…@" + u[i+1:]
		}
	}
	return u
}

// build compiles the holdco binary once (or takes -bin).
func (c *cluster) build(ctx context.Context) error {
	if *binFlag != "" {
		c.bin, _ = filepath.Abs(*binFlag)
		return nil
	}
	c.bin = filepath.Join(c.work, "holdco")
	log.Printf("building holdco (go build ./cmd/holdco)")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", c.bin, "./cmd/holdco")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}

func (c *cluster) start(ctx context.Context, s3URL string) error {
	t0 := time.Now()
	// Temporal: a server of its own, apart from holdco's processes.
	tport := harness.FreePort()
	c.temporal = &harness.Proc{Name: "temporal", Bin: c.bin, Args: []string{"temporal", "--port", fmt.Sprint(tport), "--ui-port", "0"},
		Dir: harness.Mkdir(c.work, "temporal"), LogPath: filepath.Join(c.work, "temporal.log")}
	c.temporal.Env = harness.Environ(map[string]string{"HOLDCO_DATA_DIR": c.temporal.Dir, "HOLDCO_TEMPORAL_START_TIMEOUT": "5m"})
	if err := c.temporal.Start(); err != nil {
		return err
	}
	if _, err := harness.FirstLine(c.temporal.LogPath, "Temporal development server ready", 5*time.Minute); err != nil {
		return err
	}
	log.Printf("temporal ready on 127.0.0.1:%d (%s)", tport, time.Since(t0).Round(time.Millisecond))

	for range 2 {
		c.apiAddrs = append(c.apiAddrs, harness.Addr())
		c.mcpAddrs = append(c.mcpAddrs, harness.Addr())
		c.oauthAddr = append(c.oauthAddr, harness.Addr())
		c.siteAddrs = append(c.siteAddrs, harness.Addr())
	}
	var err error
	if c.apiProxy, err = newProxy("api", c.apiAddrs); err != nil {
		return err
	}
	if c.mcpProxy, err = newProxy("mcp", c.mcpAddrs); err != nil {
		return err
	}
	if c.oauthPx, err = newProxy("oauth", c.oauthAddr); err != nil {
		return err
	}
	if c.sitesPx, err = newProxy("sites", c.siteAddrs); err != nil {
		return err
	}
	c.repoDir = harness.Mkdir(c.work, "shared-repos")
	// What every process of the cluster is given (README, "Running a
	// cluster"): one Postgres, one Temporal, the S3 blob store, the
	// public addresses of the balancers.
	c.env = map[string]string{
		"DATABASE_URL": c.dbURL, "TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", tport), "TEMPORAL_NAMESPACE": "default",
		"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "holdco", "HOLDCO_BLOB_S3_REGION": "us-east-1",
		"HOLDCO_BLOB_S3_ENDPOINT": s3URL, "HOLDCO_BLOB_S3_PATH_STYLE": "true",
		"HOLDCO_BLOB_S3_ACCESS_KEY_ID": "scale", "HOLDCO_BLOB_S3_SECRET_ACCESS_KEY": "scale-secret",
		"HOLDCO_PUBLIC_URL": c.apiProxy.url, "HOLDCO_MCP_PUBLIC_URL": c.mcpProxy.url, "HOLDCO_OAUTH_PUBLIC_URL": c.oauthPx.url,
		"HOLDCO_SITES_PUBLIC_URL": c.sitesPx.url,
		"HOLDCO_BUSINESS_LIMIT":   "100", "HOLDCO_LOG_LEVEL": "info",
	}
	migrateDir := harness.Mkdir(c.work, "migrate")
	if _, err := harness.Run(ctx, c.bin, harness.Environ(harness.Merge(c.env, map[string]string{"HOLDCO_DATA_DIR": migrateDir})), migrateDir, "migrate"); err != nil {
		return err
	}
	for i := range 2 {
		n := fmt.Sprint(i + 1)
		d := harness.Mkdir(c.work, "api"+n)
		// The API processes mount the workers' repositories' directory
		// too: their connector commits to the repositories (README,
		// "Running a cluster").
		m := harness.Addr()
		c.apis = append(c.apis, &harness.Proc{Name: "api" + n, Bin: c.bin, Args: []string{"serve", "--roles", "api,mcp,oauth"}, Dir: d,
			LogPath: filepath.Join(c.work, "api"+n+".log"), Ready: "http://" + c.apiAddrs[i] + "/health", Metrics: m,
			Env: harness.Environ(harness.Merge(c.env, map[string]string{"HOLDCO_DATA_DIR": d, "HOLDCO_API_ADDR": c.apiAddrs[i], "HOLDCO_MCP_ADDR": c.mcpAddrs[i], "HOLDCO_OAUTH_ADDR": c.oauthAddr[i],
				"HOLDCO_REPO_DIR": c.repoDir, "HOLDCO_SHARED_DATA_DIR": "true", "HOLDCO_METRICS_ADDR": m}))})
		d = harness.Mkdir(c.work, "worker"+n)
		wh := harness.Addr()
		m = harness.Addr()
		// The repositories' directory is one every worker mounts, which
		// the operator says with HOLDCO_SHARED_DATA_DIR (the start refuses
		// local repositories otherwise).
		c.workers = append(c.workers, &harness.Proc{Name: "worker" + n, Bin: c.bin, Args: []string{"serve", "--roles", "worker"}, Dir: d,
			LogPath: filepath.Join(c.work, "worker"+n+".log"), Ready: "http://" + wh + "/ready", Metrics: m,
			Env: harness.Environ(harness.Merge(c.env, map[string]string{"HOLDCO_DATA_DIR": d, "HOLDCO_WORKER_HEALTH_ADDR": wh, "HOLDCO_REPO_DIR": c.repoDir, "HOLDCO_SHARED_DATA_DIR": "true", "HOLDCO_METRICS_ADDR": m}))})
		d = harness.Mkdir(c.work, "sites"+n)
		c.sites = append(c.sites, &harness.Proc{Name: "sites" + n, Bin: c.bin, Args: []string{"serve", "--roles", "sites"}, Dir: d,
			LogPath: filepath.Join(c.work, "sites"+n+".log"), Ready: "http://" + c.siteAddrs[i] + "/_ready",
			Env: harness.Environ(harness.Merge(c.env, map[string]string{"HOLDCO_DATA_DIR": d, "HOLDCO_SITES_ADDR": c.siteAddrs[i]}))})
	}
	for _, p := range c.all() {
		if err := p.Start(); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.all()))
	for i, p := range c.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.WaitReady(*bound)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	log.Printf("cluster ready: 2 api, 2 worker, 2 sites processes (%s since the Temporal start)", time.Since(t0).Round(time.Millisecond))
	return nil
}

func (c *cluster) shutdown() {
	var wg sync.WaitGroup
	for _, p := range c.all() {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop() }()
	}
	wg.Wait()
	if c.temporal != nil {
		c.temporal.Stop()
	}
	for _, p := range []*proxy{c.apiProxy, c.mcpProxy, c.oauthPx, c.sitesPx} {
		if p != nil {
			p.close()
		}
	}
}

// figures is the summary of a run.
type figures struct {
	companies, created                   int
	sitesServed                          []int
	commits                              int
	kills                                int
	turns, turnsCompleted                int
	doubleCharged, doubleEffects         int
	filesUp, filesDownloadedEverywhere   int
	lost                                 int
	forked                               int
	healed                               int
	signInsProxied, signInsOK            int
	pinnedSignIn                         bool
	uploadsAccepted, uploadsTried        int
	uploadsAllowed                       int
	regsAccepted, regsTried, regsAllowed int
	captureAccepted, captureTried        int
	captureAllowed, captureStored        int
	sweeps                               []string // each sweep and the process holding its lease
	tp1, tp2                             float64
	tpLoad                               string // the one-minute load average before the throughput passes
	pgPeak                               int
	phases                               []string
}

func (f *figures) phase(name string, since time.Time) {
	f.phases = append(f.phases, fmt.Sprintf("%s %s", name, time.Since(since).Round(100*time.Millisecond)))
}

func (f *figures) print(c *cluster, rep *report) {
	fmt.Println("\n== scale-test figures")
	fmt.Printf("processes: 2 api (api,mcp,oauth), 2 worker, 2 sites, 1 temporal (standalone), Postgres, S3 (gofakes3); nproc %d\n", runtime.NumCPU())
	fmt.Printf("companies: %d created through 2 API processes, %d provisioned\n", f.created, f.companies)
	fmt.Printf("sign-ins through the round-robin proxy: %d of %d", f.signInsOK, f.signInsProxied)
	if f.pinnedSignIn {
		fmt.Print(" (the run's sign-in was pinned to api1)")
	}
	fmt.Println()
	fmt.Printf("site commits through the connector: %d; sites served identically per sites process: %v\n", f.commits, f.sitesServed)
	fmt.Printf("heals: %d, repositories forked: %d\n", f.healed, f.forked)
	fmt.Printf("files: %d uploaded, %d downloadable through every API process\n", f.filesUp, f.filesDownloadedEverywhere)
	fmt.Printf("turns: %d acknowledged, %d completed; double-charged %d, double effects %d\n", f.turns, f.turnsCompleted, f.doubleCharged, f.doubleEffects)
	fmt.Printf("kills survived: %d (kill -9 of worker2 and api2 mid-run, restarted)\n", f.kills)
	fmt.Printf("lost (acknowledged, then missing): %d\n", f.lost)
	fmt.Printf("limits counted once: uploads to one company through 2 API processes %d of %d accepted (one cluster: at most %d); OAuth registrations from one address through 2 authorization servers %d of %d (at most %d)\n",
		f.uploadsAccepted, f.uploadsTried, f.uploadsAllowed, f.regsAccepted, f.regsTried, f.regsAllowed)
	fmt.Printf("capture from one address through 2 API processes: %d of %d events accepted (one cluster: at most %d), %d stored\n",
		f.captureAccepted, f.captureTried, f.captureAllowed, f.captureStored)
	fmt.Printf("sweeps, each held by one process (lease metric and leases table): %d: %s\n", len(f.sweeps), strings.Join(f.sweeps, ", "))
	fmt.Printf("Postgres connections to the run's database, peak: %d\n", f.pgPeak)
	if f.tp1 > 0 {
		fmt.Printf("throughput GET /auth/me through the proxy: 1 api process %.0f req/s, 2 api processes %.0f req/s (x%.2f) on %d CPUs, load average %s\n", f.tp1, f.tp2, f.tp2/f.tp1, runtime.NumCPU(), f.tpLoad)
	}
	fmt.Printf("phases: %s\n", strings.Join(f.phases, ", "))
	for _, n := range rep.notes {
		fmt.Println("note: " + n)
	}
	_ = c
}

// samplePostgres counts the connections to the run's database every
// second; the returned function gives the peak.
func samplePostgres(ctx context.Context, admin *sql.DB, name string) func() int {
	var peak atomic.Int64
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var n int64
			if admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&n) == nil && n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	return func() int { return int(peak.Load()) }
}

// companyDatabases lists the per-company databases and roles of the run
// (dropped with it).
func companyDatabases(db *sql.DB) []string {
	rows, err := db.Query(`SELECT id FROM companies`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func dropCompanyDatabases(admin *sql.DB, companyIDs []string) {
	if len(companyIDs) == 0 {
		return
	}
	rows, err := admin.Query(`SELECT datname FROM pg_database`)
	if err != nil {
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	rows.Close()
	for _, n := range names {
		for _, id := range companyIDs {
			if strings.Contains(n, strings.ReplaceAll(id, "-", "")) || strings.Contains(n, id) {
				_, _ = admin.Exec(`DROP DATABASE IF EXISTS "` + n + `" WITH (FORCE)`)
			}
		}
	}
	rrows, err := admin.Query(`SELECT rolname FROM pg_roles`)
	if err != nil {
		return
	}
	var roles []string
	for rrows.Next() {
		var n string
		if rrows.Scan(&n) == nil {
			roles = append(roles, n)
		}
	}
	rrows.Close()
	for _, n := range roles {
		for _, id := range companyIDs {
			if strings.Contains(n, strings.ReplaceAll(id, "-", "")) || strings.Contains(n, id) {
				_, _ = admin.Exec(`DROP ROLE IF EXISTS "` + n + `"`)
			}
		}
	}
}
