//go:build crashtest

package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
	"holdco/testenv"
)

// A `kill -9` of `holdco serve` under a flood of capture requests: every
// event answered 200 is in the database (an acknowledgement follows the
// commit).
//
//	go test -tags crashtest -run TestKillDuringCaptureKeepsAcknowledgedEvents -v ./app/
func TestKillDuringCaptureKeepsAcknowledgedEvents(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holdco")
	build := exec.Command("go", "build", "-o", bin, "holdco/cmd/holdco")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	dir := t.TempDir()
	apiAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	env := append(os.Environ(), "HOLDCO_DATA_DIR="+dir, "HOLDCO_API_ADDR="+apiAddr,
		"HOLDCO_SITES_ADDR=127.0.0.1:0", "HOLDCO_MCP_ADDR=127.0.0.1:0", "HOLDCO_OAUTH_ADDR=127.0.0.1:0", "HOLDCO_WORKER_HEALTH_ADDR=127.0.0.1:0",
		"HOLDCO_TEMPORAL_PORT="+strconv.Itoa(freePort(t)), "HOLDCO_TEMPORAL_UI_PORT=0", "HOLDCO_ANALYTICS_ADDRESS_RATE=0")
	dsn, database := filepath.Join(dir, "holdco.db"), "sqlite"
	if base := os.Getenv(testenv.DatabaseURLEnv); base != "" {
		dsn, database = crashSchema(t, base), "postgres"
		env = append(env, "DATABASE_URL="+dsn)
	}
	base := "http://" + apiAddr
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	require.NoError(t, err)
	defer logFile.Close()
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

	bearer := cliLogin(t, base, "kill-capture@example.com")
	cong := authedJSON(t, "GET", base+"/auth/me", bearer, "", 200)["conglomerate_id"].(string)
	co := authedJSON(t, "POST", base+"/conglomerates/"+cong+"/companies", bearer, `{"name":"Kill Capture"}`, 201)["id"].(string)
	key := authedJSON(t, "GET", base+"/companies/"+co+"/analytics/summary?range=1d", bearer, "", 200)["key"].(string)

	var (
		mu    sync.Mutex
		acked []string
		kill  sync.Once
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("k%d-%d", w, i)
				resp, err := http.Post(base+"/analytics/e/", "application/json",
					strings.NewReader(`{"api_key":"`+key+`","event":"$pageview","distinct_id":"`+id+`"}`))
				if err != nil {
					return // the process is gone
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					acked = append(acked, id)
					n := len(acked)
					mu.Unlock()
					if n >= 2000 {
						kill.Do(func() { _ = cmd.Process.Signal(syscall.SIGKILL); close(stop) })
					}
				}
			}
		})
	}
	wg.Wait()
	kill.Do(func() { _ = cmd.Process.Signal(syscall.SIGKILL); close(stop) })
	_ = cmd.Wait()

	st, err := store.Open(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer st.Close()
	// What the killed process acknowledged and did not fold is in the
	// inbox: fold it as the next process would.
	for {
		res, err := st.Analytics().FoldAnalyticsInbox(context.Background(), 5000)
		require.NoError(t, err)
		if res.Events == 0 {
			break
		}
	}
	sc, err := st.SystemCompanyScope(context.Background(), co)
	require.NoError(t, err)
	raw, err := st.Analytics().AnalyticsRawEvents(context.Background(), sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	stored := map[string]bool{}
	for _, e := range raw {
		stored[e.DistinctID] = true
	}
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for _, id := range acked {
		if !stored[id] {
			lost++
		}
	}
	t.Logf("kill -9 during capture on %s: %d events answered 200, %d stored, %d of the answered missing", database, len(acked), len(stored), lost)
	require.GreaterOrEqual(t, len(acked), 2000, "the kill came after 2,000 events answered 200, not before")
	assert.Zero(t, lost, "events answered 200 but lost by the kill")
}
