package app_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/workflows/contract"
)

// BenchmarkAdReconcilers runs 1,000 companies with a live ad reconciler on
// the embedded default (SQLite, embedded Temporal, the ads simulator) and
// reports: the time until all run; the process's CPU and memory while
// they wait for the next UTC midnight (compared with the same process
// before they started); the time to process one day boundary for all
// (rehearsed: each campaign's day is moved back one day, then every
// reconciler is signalled at once, so each closes a day, refunds, reserves
// and relaunches as at midnight); and the history events one cycle adds.
// Run with: go test -run '^$' -bench AdReconcilers -benchtime 1x -timeout 30m ./app/
func BenchmarkAdReconcilers(b *testing.B) {
	n := 1000
	if v := os.Getenv("ADS_BENCH_COMPANIES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	for b.Loop() {
		benchAdReconcilers(b, n)
	}
}

func benchAdReconcilers(b *testing.B, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.Start(ctx, embeddedConfig(b, b.TempDir(), nil), app.AllRoles, quietLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = a.Run(ctx) }()
	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ads@example.com", NormalizedEmail: "ads@example.com", Name: "Ads"}, "Ads")
	if err != nil {
		b.Fatal(err)
	}
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialPersonal, CredentialID: "bench", UserID: user.ID, ConglomerateID: cong.ID})
	scope := a.Store.SystemConglomerateScope(cong.ID)
	if _, err := a.Service.Billing.GrantCredits(ctx, scope, models.EntryAdminAdjustment, int64(n)*100, "bench"); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	for i := range n {
		c, err := a.Store.Companies().CreateCompany(ctx, scope, models.Company{Name: fmt.Sprintf("Ads %d", i), Handle: fmt.Sprintf("ads-%d", i), Status: models.CompanyActive})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = c.ID
	}
	idleCPU, idleRSS, idleHeap := idle(5 * time.Second)

	start := time.Now()
	parallel(ids, 16, func(id string) error {
		_, err := a.Service.Growth.SetDailyCap(as, id, 3)
		return err
	})
	waitAll(b, a, ids, func(c models.AdCampaign) bool { return c.State == models.AdActive })
	b.ReportMetric(time.Since(start).Seconds(), "s-to-all-live")

	time.Sleep(5 * time.Second) // let the last tasks settle
	waitCPU, waitRSS, waitHeap := idle(10 * time.Second)
	b.ReportMetric(waitCPU*100, "%cpu-waiting")
	b.ReportMetric(idleCPU*100, "%cpu-before")
	b.ReportMetric(float64(waitRSS)/(1<<20), "MB-rss-waiting")
	b.ReportMetric(float64(idleRSS)/(1<<20), "MB-rss-before")
	b.ReportMetric(float64(waitHeap)/(1<<20), "MB-heap-waiting")
	b.ReportMetric(float64(idleHeap)/(1<<20), "MB-heap-before")

	before := historyLength(b, a, ids[:10])
	// Rehearse midnight: move every campaign's day back one day.
	parallel(ids, 16, func(id string) error {
		cs, err := a.Store.SystemCompanyScope(ctx, id)
		if err != nil {
			return err
		}
		_, err = a.Store.Growth().UpdateAdCampaign(ctx, cs, func(c *models.AdCampaign) ([]models.ActivityInput, error) {
			c.Day = c.Day.Add(-24 * time.Hour)
			return nil, nil
		})
		return err
	})
	today := time.Now().UTC().Truncate(24 * time.Hour)
	start = time.Now()
	parallel(ids, 32, func(id string) error {
		return a.Temporal.SignalWorkflow(ctx, contract.AdsWorkflowID(id), "", contract.SignalAdsReconcile, nil)
	})
	waitAll(b, a, ids, func(c models.AdCampaign) bool { return c.Day.Equal(today) && c.State == models.AdActive })
	b.ReportMetric(time.Since(start).Seconds(), "s-day-boundary-all")
	time.Sleep(2 * time.Second)
	after := historyLength(b, a, ids[:10])
	b.ReportMetric(float64(after-before)/10, "events/company/cycle")
}

func parallel(ids []string, workers int, fn func(string) error) {
	var wg sync.WaitGroup
	ch := make(chan string)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ch {
				for attempt := 0; attempt < 5; attempt++ {
					if fn(id) == nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	for _, id := range ids {
		ch <- id
	}
	close(ch)
	wg.Wait()
}

func waitAll(b *testing.B, a *app.App, ids []string, done func(models.AdCampaign) bool) {
	ctx := context.Background()
	left := append([]string{}, ids...)
	for deadline := time.Now().Add(10 * time.Minute); len(left) > 0; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d reconcilers did not get there", len(left))
		}
		var still []string
		for _, id := range left {
			cs, err := a.Store.SystemCompanyScope(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			c, err := a.Store.Growth().AdCampaign(ctx, cs)
			if err != nil || !done(c) {
				still = append(still, id)
			}
		}
		left = still
	}
}

func historyLength(b *testing.B, a *app.App, ids []string) int {
	total := 0
	for _, id := range ids {
		it := a.Temporal.GetWorkflowHistory(context.Background(), contract.AdsWorkflowID(id), "", false, 0)
		for it.HasNext() {
			if _, err := it.Next(); err != nil {
				b.Fatal(err)
			}
			total++
		}
	}
	return total
}

// idle measures the process over d: CPU used as a share of one core, then
// the resident set and the Go heap in use.
func idle(d time.Duration) (cpu float64, rss, heap uint64) {
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	t0 := time.Now()
	time.Sleep(d)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	used := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + time.Duration(r1.Stime.Nano()-r0.Stime.Nano())
	cpu = float64(used) / float64(time.Since(t0))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				rss = kb << 10
			}
		}
	}
	return cpu, rss, ms.HeapInuse
}
