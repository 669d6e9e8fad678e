// Command outage (`make outage`) measures from outside, against the real
// binary, what crashes and outages do to holdco (issue 24 items 15–17,
// issue 30's Postgres-restart and Temporal-down faults). It starts a
// private Postgres server (initdb into a temporary directory, a free
// port; never the machine's shared server), builds holdco once and runs
// `holdco serve` on it with the scripted model, signs a local user in and
// drives it as a client:
//
//   - kills: about 100 messages whose turns call create_task, while the
//     server is killed -9 at random moments (28 times) and restarted on
//     the same data; then tasks per turn (duplicated effects), ledger
//     charges per model call (double charges), turns ended.
//   - balance: 50 concurrent messages on an account of 10 credits; turns
//     started, model calls made (the process's model-call counter),
//     calls charged; the balance must bound the calls.
//   - postgres: capture and REST writes while Postgres is stopped
//     (pg_ctl stop -m fast) for 40 s and started again: events answered
//     200 vs stored, the answers during the outage (503 with
//     Retry-After, never 500), ERROR lines logged, recovery without a
//     restart; then kill -9 of holdco during capture: acknowledged vs
//     stored.
//   - temporal: holdco on a standalone Temporal (`holdco temporal`) that
//     is stopped: creates and messages answer, the companies are
//     provisioned and the turns run once it is back; the work completes
//     afterwards.
//
// Each check prints what was expected and what was measured; the program
// exits 1 when one failed. docs/reliability.md has the figures.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"holdco/scripts/internal/harness"
)

var (
	partsFlag = flag.String("parts", "kills,balance,postgres,temporal", "parts to run, comma-separated: kills, balance, postgres, temporal")
	binFlag   = flag.String("bin", "", "holdco binary (default: go build ./cmd/holdco into the work directory)")
	keep      = flag.Bool("keep", false, "keep the work directory (logs, data directories, the Postgres data) even when every check passed")
	bound     = flag.Duration("bound", 5*time.Minute, "generous bound on each eventual condition (a start, provisioning, a turn's end)")
	seed      = flag.Int64("seed", 0, "seed of the random kill moments (0: from the clock; printed)")
)

// run is one invocation: the work directory, the binary, the private
// Postgres, the checks made.
type run struct {
	work string
	bin  string
	pg   *harness.Postgres

	mu      sync.Mutex
	failed  []string
	servers []*server
}

// check prints one expectation and what was measured; a failed one
// fails the run.
func (r *run) check(part, what string, ok bool, expected, measured string) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		r.mu.Lock()
		r.failed = append(r.failed, part+": "+what)
		r.mu.Unlock()
	}
	fmt.Printf("[%s] %s: %s\n       expected: %s\n       measured: %s\n", mark, part, what, expected, measured)
}

// figure prints a measurement without an expectation.
func figure(part, format string, a ...any) {
	fmt.Printf("       %s: %s\n", part, fmt.Sprintf(format, a...))
}

func main() {
	log.SetFlags(log.Ltime)
	flag.Parse()
	os.Exit(mainErr())
}

func mainErr() int {
	ctx := context.Background()
	parts := map[string]bool{}
	for _, p := range strings.Split(*partsFlag, ",") {
		switch p = strings.TrimSpace(p); p {
		case "kills", "balance", "postgres", "temporal":
			parts[p] = true
		case "":
		default:
			log.Printf("unknown part %q (kills, balance, postgres, temporal)", p)
			return 2
		}
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	start := time.Now()
	r := &run{}
	var err error
	r.work, err = os.MkdirTemp("", "holdco-outage-")
	if err != nil {
		log.Print(err)
		return 1
	}
	r.pg, err = harness.StartPostgres(ctx, "")
	if errors.Is(err, harness.ErrNoPostgres) {
		fmt.Printf("outage skipped: %v (a private Postgres server is started for the run; the machine's shared server is never touched)\n", err)
		_ = os.RemoveAll(r.work)
		return 0
	}
	if err != nil {
		log.Printf("private Postgres: %v", err)
		return 1
	}
	log.Printf("work directory (logs, data directories): %s; private Postgres on 127.0.0.1:%d (%s)", r.work, r.pg.Port, r.pg.Dir)
	cleanup := func() {
		r.mu.Lock()
		servers := r.servers
		r.mu.Unlock()
		for _, s := range servers {
			s.stop()
		}
		if *keep || len(r.failed) > 0 {
			_ = r.pg.Stop(context.Background(), "fast")
			log.Printf("kept: %s and the Postgres data directory %s (stopped)", r.work, r.pg.Dir)
			return
		}
		r.pg.Close()
		_ = os.RemoveAll(r.work)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		log.Printf("interrupted: stopping holdco and Postgres")
		r.mu.Lock()
		r.failed = append(r.failed, "interrupted")
		r.mu.Unlock()
		cleanup()
		os.Exit(130)
	}()
	defer cleanup()

	if *binFlag != "" {
		r.bin, _ = filepath.Abs(*binFlag)
	} else {
		r.bin = filepath.Join(r.work, "holdco")
		log.Printf("building holdco (go build ./cmd/holdco)")
		if err := harness.Build(ctx, r.bin); err != nil {
			log.Print(err)
			return 1
		}
	}
	type part struct {
		name string
		fn   func(context.Context, *run) error
	}
	for _, p := range []part{{"kills", partKills}, {"balance", partBalance}, {"postgres", partPostgres}, {"temporal", partTemporal}} {
		if !parts[p.name] {
			continue
		}
		t := time.Now()
		fmt.Printf("\n== %s\n", p.name)
		if err := p.fn(ctx, r); err != nil {
			r.check(p.name, "the part ran to its end", false, "no error", err.Error())
		}
		fmt.Printf("== %s: %s\n", p.name, time.Since(t).Round(time.Second))
	}
	fmt.Printf("\nrun time %s, seed %d\n", time.Since(start).Round(time.Second), *seed)
	if len(r.failed) > 0 {
		fmt.Printf("outage FAILED (%d):\n", len(r.failed))
		for _, f := range r.failed {
			fmt.Println("  - " + f)
		}
		return 1
	}
	fmt.Println("outage passed")
	return 0
}

// server is one `holdco serve` (every role) on a database of the private
// Postgres.
type server struct {
	p     *harness.Proc
	api   string // http://host:port
	env   map[string]string
	dbURL string
	db    *sql.DB
}

// newServer creates the database and starts holdco serve on it, with the
// scripted model; extra settings override the defaults.
func (r *run) newServer(ctx context.Context, name string, extra map[string]string) (*server, error) {
	dbURL, err := r.pg.CreateDatabase(ctx, "outage_"+name)
	if err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	dir := harness.Mkdir(r.work, name)
	api := harness.Addr()
	metrics := harness.Addr()
	env := harness.Merge(map[string]string{
		"DATABASE_URL": dbURL, "HOLDCO_DATA_DIR": dir,
		"HOLDCO_API_ADDR": api, "HOLDCO_MCP_ADDR": harness.Addr(), "HOLDCO_OAUTH_ADDR": harness.Addr(),
		"HOLDCO_SITES_ADDR": harness.Addr(), "HOLDCO_WORKER_HEALTH_ADDR": harness.Addr(), "HOLDCO_METRICS_ADDR": metrics,
		"HOLDCO_TEMPORAL_PORT": strconv.Itoa(harness.FreePort()), "HOLDCO_TEMPORAL_UI_PORT": "0", "HOLDCO_TEMPORAL_START_TIMEOUT": "5m",
		"HOLDCO_LOG_LEVEL": "info", "HOLDCO_LLM_SCRIPTED_STEP_DELAY": "100ms", "HOLDCO_AGENT_RUN_EVERY": "0s",
		"HOLDCO_ANALYTICS_ADDRESS_RATE": "0", "HOLDCO_ANALYTICS_KEY_RATE": "0", "HOLDCO_BUSINESS_LIMIT": "100",
	}, extra)
	s := &server{api: "http://" + api, env: env, dbURL: dbURL, db: db,
		p: &harness.Proc{Name: name, Bin: r.bin, Args: []string{"serve"}, Env: harness.Environ(env), Dir: dir,
			LogPath: filepath.Join(r.work, name+".log"), Ready: "http://" + api + "/health", Metrics: metrics}}
	r.mu.Lock()
	r.servers = append(r.servers, s)
	r.mu.Unlock()
	t := time.Now()
	if err := s.p.Start(); err != nil {
		return nil, err
	}
	if err := s.p.WaitReady(*bound); err != nil {
		return nil, err
	}
	log.Printf("%s: holdco serve ready in %s (pid %d; log %s)", name, time.Since(t).Round(100*time.Millisecond), s.p.PID(), s.p.LogPath)
	return s, nil
}

// signedIn is every part's start: a server (newServer) and a user signed
// in on it with email.
func (r *run) signedIn(ctx context.Context, name string, extra map[string]string, email string) (*server, *user, error) {
	s, err := r.newServer(ctx, name, extra)
	if err != nil {
		return nil, nil, err
	}
	u, err := s.signIn(ctx, email)
	if err != nil {
		return nil, nil, err
	}
	return s, u, nil
}

func (s *server) stop() {
	s.p.Stop()
	_ = s.db.Close()
}

// restart starts the process again (after a kill) and waits until it
// serves.
func (s *server) restart() (time.Duration, error) {
	t := time.Now()
	if err := s.p.Start(); err != nil {
		return 0, err
	}
	err := s.p.WaitReady(*bound)
	return time.Since(t), err
}

// admin runs `holdco admin …` on the server's database.
func (s *server) admin(ctx context.Context, work string, args ...string) (string, error) {
	dir := harness.Mkdir(work, "admin")
	return harness.Run(ctx, s.p.Bin, harness.Environ(harness.Merge(s.env, map[string]string{"HOLDCO_DATA_DIR": dir, "HOLDCO_LOG_LEVEL": "warn"})), dir,
		append([]string{"admin"}, args...)...)
}

var metricLine = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$`)

// metric sums a counter of the process's metrics over its labels that
// contain every filter (`outcome="ok"`).
func (s *server) metric(name string, filters ...string) (float64, error) {
	st, b := harness.Call("GET", "http://"+s.p.Metrics+"/metrics", "", nil)
	if st != 200 {
		return 0, fmt.Errorf("metrics: %d %.200s", st, b)
	}
	sum := 0.0
	for _, m := range metricLine.FindAllStringSubmatch(string(b), -1) {
		if m[1] != name {
			continue
		}
		match := true
		for _, f := range filters {
			match = match && strings.Contains(m[2], f)
		}
		if match {
			v, _ := strconv.ParseFloat(m[3], 64)
			sum += v
		}
	}
	return sum, nil
}

// user is a signed-in local user and their account.
type user struct {
	s    *server
	key  string
	cong string
}

func (s *server) signIn(ctx context.Context, email string) (*user, error) {
	key, err := harness.SignIn(ctx, s.api, email)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	var me struct {
		ConglomerateID string `json:"conglomerate_id"`
	}
	if err := harness.JSONCall("GET", s.api+"/auth/me", key, nil, 200, &me); err != nil {
		return nil, err
	}
	return &user{s: s, key: key, cong: me.ConglomerateID}, nil
}

// balance is the account's credits.
func (u *user) balance() (int64, error) {
	var b struct {
		Balance int64 `json:"balance"`
	}
	err := harness.JSONCall("GET", u.s.api+"/conglomerates/"+u.cong+"/billing", u.key, nil, 200, &b)
	return b.Balance, err
}

// setBalance brings the account to exactly credits with an operator's
// adjustment (`holdco admin grant-credits`, docs/billing.md).
func (u *user) setBalance(ctx context.Context, work string, credits int64) error {
	have, err := u.balance()
	if err != nil {
		return err
	}
	if have != credits {
		if _, err := u.s.admin(ctx, work, "grant-credits", "--conglomerate", u.cong, "--credits", strconv.FormatInt(credits-have, 10), "--reason", "outage run"); err != nil {
			return err
		}
	}
	if have, err = u.balance(); err != nil {
		return err
	}
	if have != credits {
		return fmt.Errorf("balance %d after the adjustment, want %d", have, credits)
	}
	return nil
}

// createCompany creates a company (201) and returns its id.
func (u *user) createCompany(name string) (string, error) {
	var co struct {
		ID string `json:"id"`
	}
	err := harness.JSONCall("POST", u.s.api+"/conglomerates/"+u.cong+"/companies", u.key,
		map[string]string{"name": name, "idea": "Sell hand-drawn maps to hikers"}, 201, &co)
	return co.ID, err
}

// ready reports whether a company's resources are provisioned.
func (u *user) ready(id string) bool {
	var r struct {
		Ready bool `json:"ready"`
	}
	return harness.JSONCall("GET", u.s.api+"/companies/"+id+"/resources", u.key, nil, 200, &r) == nil && r.Ready
}

// companies creates n companies and waits until each is provisioned.
func (u *user) companies(prefix string, n int) ([]string, error) {
	var ids []string
	for i := range n {
		id, err := u.createCompany(fmt.Sprintf("%s %d", prefix, i+1))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if !harness.Eventually(*bound, 500*time.Millisecond, func() bool { return u.ready(id) }) {
			return nil, fmt.Errorf("company %s not provisioned within %s", id, *bound)
		}
	}
	return ids, nil
}

// turnView is GET /turns/{id}.
type turnView struct {
	Status string `json:"status"`
	Error  *struct {
		Error string `json:"error"`
	} `json:"error"`
}

// waitTurn polls a turn until it ends (or the bound passes) and returns
// its status.
func (u *user) waitTurn(id string, within time.Duration) string {
	var t turnView
	harness.Eventually(within, 500*time.Millisecond, func() bool {
		t = turnView{}
		return harness.JSONCall("GET", u.s.api+"/turns/"+id, u.key, nil, 200, &t) == nil && t.Status != "queued" && t.Status != "running"
	})
	return t.Status
}

// errorLines counts the ERROR lines of a log between two offsets and
// the distinct messages among them.
func errorLines(path string, from, to int64) (int, map[string]int) {
	b, _ := os.ReadFile(path)
	if to > int64(len(b)) || to <= 0 {
		to = int64(len(b))
	}
	if from > to {
		from = to
	}
	msgs := map[string]int{}
	n := 0
	for _, l := range strings.Split(string(b[from:to]), "\n") {
		if !strings.Contains(l, "level=ERROR") {
			continue
		}
		n++
		msg := l
		if i := strings.Index(l, "msg="); i >= 0 {
			msg = l[i+4:]
			if strings.HasPrefix(msg, `"`) {
				if j := strings.Index(msg[1:], `"`); j >= 0 {
					msg = msg[1 : j+1]
				}
			} else if j := strings.Index(msg, " "); j >= 0 {
				msg = msg[:j]
			}
		}
		msgs[msg]++
	}
	return n, msgs
}

func describeMsgs(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%d× %q", v, k))
	}
	return strings.Join(parts, "; ")
}
