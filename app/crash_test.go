//go:build crashtest

// The crash test kills a real `holdco serve` with SIGKILL during concurrent
// company creation, restarts it on the same data, and counts companies
// created against companies provisioned. It is slow (a binary build, two
// starts of the embedded Temporal server), so it runs only on demand:
//
//	go test -tags crashtest -run TestKillDuringConcurrentCreates -v ./app/
//
// With TEST_DATABASE_URL set it runs on a fresh schema of that Postgres.
// scripts/crashtest.sh runs it on SQLite and on Postgres.
package app_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/companydb"
	"holdco/testenv"
)

const crashCreates = 30

func TestKillDuringConcurrentCreates(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holdco")
	build := exec.Command("go", "build", "-o", bin, "holdco/cmd/holdco")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	dir := t.TempDir()
	apiAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	env := append(os.Environ(), "HOLDCO_DATA_DIR="+dir, "HOLDCO_API_ADDR="+apiAddr,
		"HOLDCO_SITES_ADDR=127.0.0.1:0", "HOLDCO_MCP_ADDR=127.0.0.1:0", "HOLDCO_OAUTH_ADDR=127.0.0.1:0", "HOLDCO_WORKER_HEALTH_ADDR=127.0.0.1:0",
		"HOLDCO_TEMPORAL_PORT="+strconv.Itoa(freePort(t)), "HOLDCO_TEMPORAL_UI_PORT=0", "HOLDCO_SHUTDOWN_TIMEOUT=10s",
		"HOLDCO_BUSINESS_LIMIT="+strconv.Itoa(crashCreates)) // every create may go through
	database := "sqlite"
	if base := os.Getenv(testenv.DatabaseURLEnv); base != "" {
		env = append(env, "DATABASE_URL="+crashSchema(t, base))
		database = "postgres"
	}
	base := "http://" + apiAddr
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	require.NoError(t, err)
	defer logFile.Close()
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve")
		cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool {
			resp, err := http.Get(base + "/health")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 2*time.Minute, 100*time.Millisecond, "holdco serve answers")
		return cmd
	}

	first := start()
	key := cliLogin(t, base, "crash@example.com")
	cong := authedJSON(t, "GET", base+"/auth/me", key, "", 200)["conglomerate_id"].(string)

	// 30 concurrent creates; SIGKILL as soon as the fifth answer arrives.
	var answered, created atomic.Int32
	var kill sync.Once
	var wg sync.WaitGroup
	for i := range crashCreates {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", base+"/conglomerates/"+cong+"/companies",
				strings.NewReader(fmt.Sprintf(`{"name":"Crash %d","idea":"Survive"}`, i)))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				if resp.StatusCode == http.StatusCreated {
					created.Add(1)
				}
				resp.Body.Close()
			}
			if answered.Add(1) >= 5 {
				kill.Do(func() { _ = first.Process.Signal(syscall.SIGKILL) })
			}
		})
	}
	wg.Wait()
	kill.Do(func() { _ = first.Process.Signal(syscall.SIGKILL) })
	_ = first.Wait()

	second := start()
	defer func() {
		_ = second.Process.Signal(syscall.SIGTERM)
		_ = second.Wait()
	}()
	list := authedJSON(t, "GET", base+"/conglomerates/"+cong+"/companies", key, "", 200)["companies"].([]any)
	if pg := os.Getenv(testenv.DatabaseURLEnv); pg != "" {
		// Company databases and roles live outside the schema: drop them.
		t.Cleanup(func() {
			db, err := sql.Open("pgx", pg)
			require.NoError(t, err)
			defer db.Close()
			for _, c := range list {
				name := companydb.Name(c.(map[string]any)["id"].(string))
				_, _ = db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
				_, _ = db.ExecContext(context.Background(), `DROP ROLE IF EXISTS "`+name+`"`)
			}
		})
	}
	provisioned := map[string]bool{}
	deadline := time.Now().Add(3 * time.Minute)
	for len(provisioned) < len(list) && time.Now().Before(deadline) {
		for _, c := range list {
			id := c.(map[string]any)["id"].(string)
			if !provisioned[id] && authedJSON(t, "GET", base+"/companies/"+id+"/resources", key, "", 200)["ready"] == true {
				provisioned[id] = true
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("crash test on %s: %d creates sent, %d answered 201 before the kill, %d companies in the database after restart, %d of them provisioned",
		database, crashCreates, created.Load(), len(list), len(provisioned))
	assert.Equal(t, len(list), len(provisioned), "every company created before the crash is provisioned after the restart")
	assert.GreaterOrEqual(t, len(list), int(created.Load()), "every 201 is a company")
}

// crashSchema makes a fresh schema on the Postgres at base and returns a
// URL whose search_path selects it; the schema is dropped afterwards.
func crashSchema(t *testing.T, base string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "crash_" + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.ExecContext(context.Background(), `CREATE SCHEMA "`+schema+`"`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`) })
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
