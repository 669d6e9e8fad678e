package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"holdco/scripts/internal/harness"
	"holdco/service/analytics"
)

func apiURL(c *cluster, i int) string { return "http://" + c.apiAddrs[i] }

// drive is the scenario. Errors it returns end the scenario; failed
// checks are recorded in rep and the scenario goes on.
func drive(ctx context.Context, c *cluster, db *sql.DB, rep *report, f *figures) error {
	proxyURL := c.apiProxy.url

	// 1. Sign-ins through the round-robin proxy: the development identity
	// provider's state is in the database, so a login started on one API
	// process ends on the other.
	t := time.Now()
	for i := range 6 {
		f.signInsProxied++
		if _, err := harness.SignIn(ctx, proxyURL, fmt.Sprintf("probe%d@example.com", i)); err == nil {
			f.signInsOK++
		} else if i == 0 {
			rep.note("sign-in through the proxy failed: %v", err)
		}
	}
	key, err := harness.SignIn(ctx, proxyURL, "founder@example.com")
	if err != nil {
		rep.note("the founder's sign-in through the round-robin proxy failed (%v): pinned to api1", err)
		f.pinnedSignIn = true
		c.apiProxy.only(0)
		key, err = harness.SignIn(ctx, proxyURL, "founder@example.com")
		c.apiProxy.only(-1)
		if err != nil {
			return fmt.Errorf("sign-in pinned to api1: %w", err)
		}
	}
	if f.signInsOK < f.signInsProxied {
		rep.fail("sign-in behind a round-robin proxy: %d of %d worked (the run goes on signed in pinned to api1)", f.signInsOK, f.signInsProxied)
	}
	var me struct {
		ConglomerateID string `json:"conglomerate_id"`
	}
	if err := harness.JSONCall("GET", proxyURL+"/auth/me", key, nil, 200, &me); err != nil {
		return err
	}
	adminOut, err := harness.Run(ctx, c.bin, c.apis[0].Env, c.apis[0].Dir, "admin", "create-token", "--name", "scale-test")
	if err != nil {
		return err
	}
	adminKey := strings.TrimSpace(strings.SplitN(adminOut, "\n", 2)[0])
	if _, err := harness.Run(ctx, c.bin, c.apis[0].Env, c.apis[0].Dir, "admin", "grant-credits", "--conglomerate", me.ConglomerateID, "--credits", "5000", "--reason", "scale test"); err != nil {
		return err
	}
	f.phase("sign-in", t)

	// 2. Companies through both API processes (alternately, directly).
	t = time.Now()
	var cos []*company
	for i := range *nCompanies {
		via := i % 2
		name := fmt.Sprintf("Scale Shop %d", i+1)
		var co struct{ ID, Handle string }
		s, b := harness.Call("POST", apiURL(c, via)+"/conglomerates/"+me.ConglomerateID+"/companies", key, map[string]string{"name": name, "idea": "Sell hand-drawn maps to hikers, shop number " + fmt.Sprint(i+1)})
		if s != 201 || json.Unmarshal(b, &co) != nil {
			return fmt.Errorf("create company %d through api%d: %d %.300s", i+1, via+1, s, b)
		}
		f.created++
		cos = append(cos, &company{ID: co.ID, Handle: co.Handle, Name: name, via: via})
	}
	for _, co := range cos {
		ok := harness.Eventually(*bound, 500*time.Millisecond, func() bool {
			var r struct {
				Ready bool `json:"ready"`
			}
			return harness.JSONCall("GET", proxyURL+"/companies/"+co.ID+"/resources", key, nil, 200, &r) == nil && r.Ready
		})
		if !ok {
			rep.fail("company %s (created through api%d) not provisioned within %s: lost", co.Handle, co.via+1, *bound)
			f.lost++
			continue
		}
		f.companies++
	}
	f.phase("create+provision", t)

	// 3. Each provisioned site served identically by both sites processes.
	checkSites(c, cos, rep, f, func(co *company) string { return "" })

	// 4. Commits to every site through the connector (its repository
	// tools), through the connector's balancer: the API processes have no
	// worker role; they open the repositories in the shared directory.
	t = time.Now()
	var mcpToken string
	if !f.pinnedSignIn {
		mcpToken, err = harness.ConnectorToken(ctx, c.mcpProxy.url, "founder@example.com", "holdco scale test")
	}
	if f.pinnedSignIn || err != nil {
		if err != nil {
			rep.note("connector token through the round-robin proxies failed (%v): pinned to api1", err)
		}
		// The sign-in inside the authorization flow is the development
		// identity provider's: pinned with it.
		c.apiProxy.only(0)
		c.oauthPx.only(0)
		mcpToken, err = harness.ConnectorToken(ctx, c.mcpProxy.url, "founder@example.com", "holdco scale test")
		c.apiProxy.only(-1)
		c.oauthPx.only(-1)
	}
	if err != nil {
		return fmt.Errorf("connector token: %w", err)
	}
	committed := map[string]bool{}
	newPage := func(co *company) string { return fmt.Sprintf("<h1>%s, v2</h1>", co.Name) }
	// page is what the sites must serve as the home page: the committed
	// one, or (empty) any.
	page := func(co *company) string {
		if !committed[co.ID] {
			return ""
		}
		return newPage(co)
	}
	for _, co := range cos {
		_, err := callTool(ctx, c.mcpProxy.url, mcpToken, "commit_repository_files", map[string]any{"business": co.Handle, "message": "new home page",
			"files": []map[string]string{{"path": "index.html", "content": newPage(co)}, {"path": "about/index.html", "content": "about " + co.Handle}}})
		if err != nil {
			rep.fail("commit to %s through the connector of the api,mcp,oauth processes: %v", co.Handle, err)
			continue
		}
		f.commits++
		committed[co.ID] = true
	}
	checkSites(c, cos, rep, f, page)
	f.phase("commit+deploy", t)

	// 5. Heal through the admin endpoint: nothing to heal, no second
	// repository.
	t = time.Now()
	for _, co := range cos {
		var h struct {
			Healthy       bool `json:"healthy"`
			HealRequested bool `json:"heal_requested"`
		}
		if err := harness.JSONCall("POST", proxyURL+"/admin/companies/"+co.ID+"/heal", adminKey, nil, 200, &h); err != nil {
			rep.fail("heal %s: %v", co.Handle, err)
			continue
		}
		f.healed++
		if !h.Healthy || h.HealRequested {
			rep.fail("heal %s: healthy=%v heal_requested=%v (a provisioned company)", co.Handle, h.Healthy, h.HealRequested)
		}
	}
	checkRepositories(c, db, cos, rep, f)
	f.phase("heal", t)

	// 6. Mid-run: messages start turns on the workers and files go up
	// through api1 while worker2 and api2 are killed -9 and restarted.
	t = time.Now()
	var (
		mu    sync.Mutex
		turns []turn
		wg    sync.WaitGroup
		acked atomic.Int64
	)
	total := len(cos) * *turnsPer
	sendMessage := func(co *company, k int) {
		subject := fmt.Sprintf("Plan week %d for %s", k+1, co.Handle)
		// A message not acknowledged (the proxy's 502 while api2 dies)
		// is sent again, as a client would, with the key made once for
		// it: a first send that was taken before its answer was lost
		// answers its turn instead of starting a second one. An
		// acknowledged message is never repeated.
		msgKey := http.Header{"Idempotency-Key": {uuid.NewString()}}
		for attempt := 0; ; attempt++ {
			a := harness.DoWith("POST", proxyURL+"/companies/"+co.ID+"/messages", key, msgKey, map[string]string{"message": subject})
			s, b := a.Status, a.Body
			if s == 200 || s == 201 || s == 202 {
				var r struct {
					TurnID string `json:"turn_id"`
				}
				if json.Unmarshal(b, &r) != nil || r.TurnID == "" {
					rep.fail("message to %s: acknowledged %d without a turn id: %.200s", co.Handle, s, b)
					return
				}
				mu.Lock()
				turns = append(turns, turn{ID: r.TurnID, CompanyID: co.ID, Subject: subject})
				mu.Unlock()
				acked.Add(1)
				return
			}
			if s == 409 && strings.Contains(string(b), `"turn_id"`) && attempt < 600 {
				// One turn at a time per company: the message waits for
				// the running one (not acknowledged: sent again).
				time.Sleep(time.Second)
				continue
			}
			if !harness.Unacknowledged(s) || attempt > 600 {
				rep.fail("message to %s: %d %.300s", co.Handle, s, b)
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	sem := make(chan struct{}, 3)
	for k := range *turnsPer {
		for _, co := range cos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				sendMessage(co, k)
			}()
		}
	}
	// Files through api1 meanwhile (api1 is not killed).
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() {
		defer fwg.Done()
		uploadAll(c, key, cos, 0, rep, f, &mu)
	}()
	// The kills: once a third of the turns are acknowledged and a turn
	// runs on the workers.
	running := false
	harness.Eventually(*bound, 200*time.Millisecond, func() bool {
		if acked.Load() < int64(max(1, total/3)) {
			return false
		}
		var n int
		_ = db.QueryRow(`SELECT count(*) FROM turns WHERE status IN ('queued', 'running')`).Scan(&n)
		running = n > 0
		return running || acked.Load() == int64(total)
	})
	if !running {
		rep.note("no turn was queued or running at the kills")
	}
	log.Printf("kill -9 worker2 (pid %d) and api2 (pid %d) with %d of %d messages acknowledged", c.workers[1].PID(), c.apis[1].PID(), acked.Load(), total)
	c.apiProxy.setUp(1, false) // what a balancer's health check sees next
	c.mcpProxy.setUp(1, false)
	c.oauthPx.setUp(1, false)
	var kwg sync.WaitGroup
	for _, p := range []*harness.Proc{c.workers[1], c.apis[1]} {
		kwg.Add(1)
		go func() { defer kwg.Done(); p.Kill9() }()
	}
	kwg.Wait()
	for _, p := range []*harness.Proc{c.workers[1], c.apis[1]} {
		if err := p.Start(); err != nil {
			return err
		}
	}
	for _, p := range []*harness.Proc{c.workers[1], c.apis[1]} {
		if err := p.WaitReady(*bound); err != nil {
			return fmt.Errorf("restart after kill -9: %w", err)
		}
	}
	c.apiProxy.setUp(1, true)
	c.mcpProxy.setUp(1, true)
	c.oauthPx.setUp(1, true)
	f.kills = 2
	log.Printf("worker2 and api2 restarted")
	wg.Wait()
	fwg.Wait()
	// More files through the restarted api2.
	uploadAll(c, key, cos, 1, rep, f, &mu)
	f.turns = len(turns)

	// Every acknowledged turn ends, completed.
	for _, tr := range turns {
		var got struct {
			Status      string `json:"status"`
			CreditsCost *int64 `json:"credits_cost"`
		}
		ok := harness.Eventually(*bound, time.Second, func() bool {
			return harness.JSONCall("GET", proxyURL+"/turns/"+tr.ID, key, nil, 200, &got) == nil &&
				got.Status != "queued" && got.Status != "running"
		})
		switch {
		case !ok:
			rep.fail("turn %s (%s) still %s after %s: lost", tr.ID, tr.Subject, got.Status, *bound)
			f.lost++
		case got.Status != "completed":
			rep.fail("turn %s (%s) ended %s", tr.ID, tr.Subject, got.Status)
		default:
			f.turnsCompleted++
		}
	}
	f.phase("turns+kills", t)
	checkCharges(db, turns, rep, f)

	// 7. After the kills: every file downloadable through each API
	// process, every site still served identically.
	t = time.Now()
	checkFiles(c, key, cos, rep, f)
	checkSites(c, cos, rep, f, page)
	checkRepositories(c, db, cos, rep, f)
	f.phase("files+sites after kills", t)

	// 8. Issue 27's shared limits and sweeps.
	checkLimits(c, key, me.ConglomerateID, rep, f)
	checkCaptureLimit(ctx, c, db, cos, rep, f)
	checkSweeps(ctx, c, db, rep, f)

	// 9. Throughput: 1 vs 2 API processes behind the proxy.
	t = time.Now()
	f.tpLoad = loadAverage()
	c.apiProxy.only(0)
	f.tp1 = throughput(proxyURL+"/auth/me", key, *tpRequests, *tpConc, rep)
	c.apiProxy.only(-1)
	f.tp2 = throughput(proxyURL+"/auth/me", key, *tpRequests, *tpConc, rep)
	f.phase("throughput", t)
	return nil
}

// checkSites: every company's home page (and about page once committed)
// is served with 200 and the same bytes by every sites process; want
// (when not empty) is the committed page. A switch of deploy may take a
// moment to reach a process's cache: eventual, with the bound.
func checkSites(c *cluster, cos []*company, rep *report, f *figures, want func(*company) string) {
	served := make([]int, len(c.siteAddrs))
	for _, co := range cos {
		paths := []string{"/" + co.Handle + "/"}
		if want(co) != "" {
			paths = append(paths, "/"+co.Handle+"/about/")
		}
		var last string
		ok := harness.Eventually(*bound, 300*time.Millisecond, func() bool {
			for _, p := range paths {
				var first []byte
				for i, a := range c.siteAddrs {
					s, b := harness.Call("GET", "http://"+a+p, "", nil)
					if s != 200 {
						last = fmt.Sprintf("sites%d answered %d for %s", i+1, s, p)
						return false
					}
					if i == 0 {
						first = b
					} else if !bytes.Equal(first, b) {
						last = fmt.Sprintf("sites1 and sites%d differ for %s", i+1, p)
						return false
					}
				}
				if p == "/"+co.Handle+"/" && want(co) != "" && string(first) != want(co) {
					last = fmt.Sprintf("%s is not the committed page yet: %.80q", p, first)
					return false
				}
			}
			return true
		})
		if !ok {
			rep.fail("site %s: %s", co.Handle, last)
			continue
		}
		for i := range served {
			served[i]++
		}
	}
	f.sitesServed = served
}

// checkRepositories: each company's repository has one home, in the
// shared directory, whose first commit is the one recorded; no worker
// or API process made a repository on its own disk.
func checkRepositories(c *cluster, db *sql.DB, cos []*company, rep *report, f *figures) {
	forked := 0
	for _, co := range cos {
		var home, first string
		if err := db.QueryRow(`SELECT home, first_commit FROM company_repositories WHERE company_id = $1`, co.ID).Scan(&home, &first); err != nil {
			rep.fail("repository record of %s: %v", co.Handle, err)
			continue
		}
		dir := filepath.Join(c.repoDir, co.ID+".git")
		out, err := exec.Command("git", "--git-dir", dir, "rev-list", "--max-parents=0", "main").Output()
		roots := strings.Fields(string(out))
		switch {
		case err != nil:
			rep.fail("repository of %s in the shared directory: %v", co.Handle, err)
			forked++
		case len(roots) != 1 || roots[0] != first:
			rep.fail("repository of %s forked: recorded first commit %s, main's roots %v (home %s)", co.Handle, first, roots, home)
			forked++
		}
	}
	for _, w := range append(append([]*harness.Proc{}, c.workers...), c.apis...) {
		_ = filepath.WalkDir(w.Dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && strings.HasSuffix(p, ".git") {
				rep.fail("a repository on %s's own disk: %s", w.Name, p)
				forked++
				return filepath.SkipDir
			}
			return nil
		})
	}
	f.forked = max(f.forked, forked)
}

// uploadAll uploads filesPer files per company through API process via.
func uploadAll(c *cluster, key string, cos []*company, via int, rep *report, f *figures, mu *sync.Mutex) {
	for _, co := range cos {
		for k := range *filesPer {
			path := fmt.Sprintf("docs/api%d-%d.txt", via+1, k+1)
			content := []byte(fmt.Sprintf("file %d of %s through api%d\n%s", k+1, co.Handle, via+1, strings.Repeat("map ", 256*(k+1))))
			var s int
			var b []byte
			for attempt := 0; attempt < 60; attempt++ {
				if s, b = upload(apiURL(c, via), key, co.ID, path, content); !harness.Unacknowledged(s) {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			var r struct {
				ID string `json:"id"`
			}
			if s != 200 || json.Unmarshal(b, &r) != nil {
				rep.fail("upload %s to %s through api%d: %d %.200s", path, co.Handle, via+1, s, b)
				continue
			}
			mu.Lock()
			co.files = append(co.files, file{ID: r.ID, Path: path, content: content, via: via})
			f.filesUp++
			mu.Unlock()
		}
	}
}

// checkFiles downloads every file through every API process.
func checkFiles(c *cluster, key string, cos []*company, rep *report, f *figures) {
	for _, co := range cos {
		for _, fl := range co.files {
			everywhere := true
			for i := range c.apiAddrs {
				got, err := download(apiURL(c, i), key, co.ID, fl.ID)
				switch {
				case err != nil:
					rep.fail("file %s of %s (uploaded through api%d) through api%d: %v", fl.Path, co.Handle, fl.via+1, i+1, err)
					everywhere = false
				case !bytes.Equal(got, fl.content):
					rep.fail("file %s of %s through api%d: %d bytes differ from the %d uploaded", fl.Path, co.Handle, i+1, len(got), len(fl.content))
					everywhere = false
				}
			}
			if everywhere {
				f.filesDownloadedEverywhere++
			} else {
				f.lost++
			}
		}
	}
}

// checkCharges: the scripted model's plan for a message without a
// question is three model calls (write_document, create_task, the
// answer): each turn has exactly three model charges, the sum its
// credits_cost, one document and one task.
func checkCharges(db *sql.DB, turns []turn, rep *report, f *figures) {
	for _, tr := range turns {
		var n, sum int64
		if err := db.QueryRow(`SELECT count(*), COALESCE(sum(amount), 0) FROM credit_ledger_entries WHERE run_id = $1 AND type = 'TOKEN_USAGE_PARTIAL'`, tr.ID).Scan(&n, &sum); err != nil {
			rep.fail("ledger of turn %s: %v", tr.ID, err)
			continue
		}
		var cost sql.NullInt64
		_ = db.QueryRow(`SELECT credits_cost FROM turns WHERE id = $1`, tr.ID).Scan(&cost)
		if n != 3 {
			rep.fail("turn %s (%s): %d model charges, want 3", tr.ID, tr.Subject, n)
			if n > 3 {
				f.doubleCharged++
			}
		}
		if cost.Valid && cost.Int64 != -sum {
			rep.fail("turn %s: credits_cost %d but the ledger holds %d", tr.ID, cost.Int64, -sum)
		}
		var docs, tasks int
		_ = db.QueryRow(`SELECT count(*) FROM company_documents WHERE company_id = $1 AND title = $2`, tr.CompanyID, "Notes: "+tr.Subject).Scan(&docs)
		_ = db.QueryRow(`SELECT count(*) FROM company_tasks WHERE company_id = $1 AND title = $2`, tr.CompanyID, "Follow up: "+tr.Subject).Scan(&tasks)
		// A company has one document per type: a later turn's notes
		// replace an earlier turn's (0 or 1 with this title).
		if docs > 1 || tasks != 1 {
			rep.fail("turn %s (%s): %d documents and %d tasks, want at most 1 and 1", tr.ID, tr.Subject, docs, tasks)
			if docs > 1 || tasks > 1 {
				f.doubleEffects++
			}
		}
	}
}

// checkLimits: issue 27 item 5, limits counted once per cluster. A
// company's uploads (a burst of 20) and an address's OAuth registrations
// (30 a minute) are tried through both API processes alternately.
func checkLimits(c *cluster, key, congID string, rep *report, f *figures) {
	var co struct{ ID string }
	if err := harness.JSONCall("POST", apiURL(c, 0)+"/conglomerates/"+congID+"/companies", key, map[string]string{"name": "Scale Limits", "idea": "Count the limits once"}, 201, &co); err != nil {
		rep.fail("limits company: %v", err)
		return
	}
	const tries = 40
	start := time.Now()
	accepted := 0
	for i := range tries {
		s, b := upload(apiURL(c, i%2), key, co.ID, fmt.Sprintf("limit/%d.txt", i), []byte("x"))
		switch s {
		case 200:
			accepted++
		case 429:
		default:
			rep.fail("limit upload %d: %d %.200s", i, s, b)
		}
	}
	// A burst of 20, refilled at one a second: one cluster takes at most
	// 20 + the seconds elapsed (+1 for the rounding of a partial token).
	allowed := 20 + int(math.Ceil(time.Since(start).Seconds())) + 1
	f.uploadsAccepted, f.uploadsTried, f.uploadsAllowed = accepted, tries, allowed
	switch {
	case accepted > allowed:
		rep.fail("upload limit counted once: %d of %d uploads to one company accepted through 2 API processes in %s; one cluster allows at most %d", accepted, tries, time.Since(start).Round(time.Millisecond), allowed)
	case accepted < 20:
		// The burst is the cluster's: fewer accepted means a process
		// refuses what the limit allows.
		rep.fail("upload limit: only %d of %d uploads accepted, below the burst of 20", accepted, tries)
	default:
		log.Printf("upload limit counted once: %d of %d accepted (at most %d)", accepted, tries, allowed)
	}

	start = time.Now()
	accepted = 0
	for i := range 70 {
		s, b := harness.Call("POST", "http://"+c.oauthAddr[i%2]+"/oidc/register", "", map[string]any{"client_name": fmt.Sprintf("limit %d", i),
			"redirect_uris": []string{"http://127.0.0.1:40997/cb"}, "application_type": "native", "token_endpoint_auth_method": "none"})
		switch s {
		case 201:
			accepted++
		case 429:
		default:
			rep.fail("limit registration %d: %d %.200s", i, s, b)
		}
	}
	allowed = 30 + int(math.Ceil(time.Since(start).Seconds()/2)) + 1
	f.regsAccepted, f.regsTried, f.regsAllowed = accepted, 70, allowed
	if accepted > allowed {
		rep.fail("OAuth registration limit counted once: %d of 70 registrations from one address accepted through 2 authorization servers in %s; one cluster allows at most %d", accepted, time.Since(start).Round(time.Millisecond), allowed)
	} else {
		log.Printf("OAuth registration limit counted once: %d of 70 accepted (at most %d)", accepted, allowed)
	}
}

// Capture's flood guard per client address (analytics.DefaultAddressRate
// events a second, a burst of ten seconds of it): the cluster's bucket
// plus at most one chunk (a second of the rate) per process on credit.
const (
	captureAddressRate  = 100
	captureAddressBurst = 10 * captureAddressRate
)

// checkCaptureLimit: capture from one address through both API processes
// alternately is limited once for the cluster. Batches of 50 events go to
// /analytics/batch/ until 3,000 are sent; the accepted events must fit the
// shared bucket (its burst, its refill over the run, one chunk per
// process) and reach at least the burst (a process refusing what the
// cluster allows is wrong too). Every event answered 200 must be stored:
// the count of the run's events in the database afterwards equals the
// accepted count.
func checkCaptureLimit(ctx context.Context, c *cluster, db *sql.DB, cos []*company, rep *report, f *figures) {
	if len(cos) == 0 {
		return
	}
	var key string
	if err := db.QueryRowContext(ctx, "SELECT key FROM analytics_keys WHERE company_id = $1", cos[0].ID).Scan(&key); err != nil {
		rep.fail("capture limit: the analytics key of %s: %v", cos[0].ID, err)
		return
	}
	const batch, batches = 50, 60
	run := fmt.Sprintf("scale-limit-%d", time.Now().UnixNano())
	start := time.Now()
	accepted := 0
	for i := range batches {
		evs := make([]map[string]any, batch)
		for j := range evs {
			evs[j] = map[string]any{"event": "$pageview", "distinct_id": run, "properties": map[string]any{"$current_url": fmt.Sprintf("https://scale.example/%d/%d", i, j)}}
		}
		s, b := harness.Call("POST", apiURL(c, i%2)+"/analytics/batch/", "", map[string]any{"api_key": key, "batch": evs})
		switch s {
		case 200:
			accepted += batch
		case 429:
		default:
			rep.fail("capture batch %d: %d %.200s", i, s, b)
		}
	}
	elapsed := time.Since(start)
	allowed := captureAddressBurst + int(math.Ceil(elapsed.Seconds()*captureAddressRate)) + 2*captureAddressRate
	f.captureAccepted, f.captureTried, f.captureAllowed = accepted, batch*batches, allowed
	switch {
	case accepted > allowed:
		rep.fail("capture limit counted once: %d of %d events from one address accepted through 2 API processes in %s; one cluster allows at most %d", accepted, batch*batches, elapsed.Round(time.Millisecond), allowed)
	case accepted < captureAddressBurst:
		rep.fail("capture limit: only %d of %d events accepted, below the burst of %d", accepted, batch*batches, captureAddressBurst)
	default:
		log.Printf("capture limit counted once: %d of %d events accepted (at most %d)", accepted, batch*batches, allowed)
	}
	// An answer 200 means the events are committed to the capture inbox;
	// the processes fold them into analytics_events within the fold's lag
	// (analytics.DefaultFoldMaxLag during a flood). Counted once folded,
	// so that the whole path is checked: none lost, none counted twice.
	var stored int
	deadline := time.Now().Add(captureFoldWait)
	for {
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM analytics_events WHERE distinct_id = $1", run).Scan(&stored); err != nil {
			rep.fail("capture limit: count the stored events: %v", err)
			return
		}
		if stored >= accepted || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.captureStored = stored
	if stored != accepted {
		rep.fail("capture: %d events answered 200, %d stored (folded) within %s", accepted, stored, captureFoldWait)
	}
}

// captureFoldWait bounds the wait for acknowledged events to be folded:
// the fold's longest deferral (analytics.DefaultFoldMaxLag) and room.
const captureFoldWait = analytics.DefaultFoldMaxLag + 20*time.Second

// checkSweeps: each background sweep runs in one process of the
// cluster. Every process of a sweep's role reports the sweep's lease in
// its metrics (holdco_sweep_lease_held, 0 or 1); for each sweep exactly
// one process must report 1, and the leases table must name that
// process (its holder carries the process id) with a lease not expired.
// A lease the killed worker or API process held passes to another
// process at its expiry: eventual, with the bound.
func checkSweeps(ctx context.Context, c *cluster, db *sql.DB, rep *report, f *figures) {
	procs := append(append([]*harness.Proc{}, c.apis...), c.workers...)
	var last string
	var summary []string
	ok := harness.Eventually(*bound, time.Second, func() bool {
		held := map[string][]*harness.Proc{} // sweep -> processes reporting 1
		reporters := map[string]int{}
		for _, p := range procs {
			g, err := sweepLeaseMetric(p)
			if err != nil {
				last = err.Error()
				return false
			}
			for sw, v := range g {
				reporters[sw]++
				if v == 1 {
					held[sw] = append(held[sw], p)
				}
			}
		}
		// The worker's sweeps (app/sweeper.go) and the api role's.
		for _, want := range []string{"provisioning_outbox", "turns", "blobs", "analytics_retention"} {
			if reporters[want] == 0 {
				last = fmt.Sprintf("no process reports the sweep %s", want)
				return false
			}
		}
		summary = summary[:0]
		for sw := range reporters {
			hs := held[sw]
			if len(hs) != 1 {
				names := []string{}
				for _, p := range hs {
					names = append(names, p.Name)
				}
				last = fmt.Sprintf("sweep %s: lease held by %d processes %v (of %d reporting it)", sw, len(hs), names, reporters[sw])
				return false
			}
			var holder string
			var live bool
			if err := db.QueryRowContext(ctx, `SELECT holder, expires_at > now() FROM leases WHERE name = $1`, sw).Scan(&holder, &live); err != nil {
				last = fmt.Sprintf("sweep %s: leases row: %v", sw, err)
				return false
			}
			parts := strings.Split(holder, "/")
			if len(parts) < 3 || parts[len(parts)-2] != fmt.Sprint(hs[0].PID()) || !live {
				last = fmt.Sprintf("sweep %s: %s reports the lease (pid %d), the leases table names %q (live %v)", sw, hs[0].Name, hs[0].PID(), holder, live)
				return false
			}
			summary = append(summary, fmt.Sprintf("%s %s/%d", sw, hs[0].Name, reporters[sw]))
		}
		return true
	})
	if !ok {
		rep.fail("each sweep once: %s", last)
		return
	}
	sort.Strings(summary)
	f.sweeps = summary
	log.Printf("each sweep once (sweep, its holder / processes competing): %s", strings.Join(summary, ", "))
}

// sweepLeaseMetric reads holdco_sweep_lease_held of one process's
// metrics: sweep -> value.
func sweepLeaseMetric(p *harness.Proc) (map[string]float64, error) {
	s, b := harness.Call("GET", "http://"+p.Metrics+"/metrics", "", nil)
	if s != 200 {
		return nil, fmt.Errorf("%s metrics: %d %.200s", p.Name, s, b)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		rest, found := strings.CutPrefix(line, `holdco_sweep_lease_held{sweep="`)
		if !found {
			continue
		}
		name, val, found := strings.Cut(rest, `"} `)
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("%s metrics: %q: %v", p.Name, line, err)
		}
		out[name] = v
	}
	return out, nil
}
