package founding_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

// BenchmarkCreateBusiness measures create_business's use case (input
// checks, the duplicate key, the gates, the one transaction with the
// company, its provisioning intent and the welcome credits, and the
// provisioning start on the embedded test server): each iteration founds
// another idea. Reports p50/p99.
func BenchmarkCreateBusiness(b *testing.B) {
	tmp := testenv.NewTemporal(b, nil)
	e := servicetest.NewWith(b, usecases.Options{Temporal: tmp.Client, FoundingLimits: founding.Limits{BusinessLimit: 1 << 40}})
	ada, _ := e.User(b, "ada@example.com")
	ctx := connector(b, ada, "bench")
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		_, err := e.Svc.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: fmt.Sprintf("Idea %d: maps for hikers and families", i)})
		lat[i] = time.Since(start)
		require.NoError(b, err)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkDuplicateCreateBusiness measures a retry of the same idea
// within the window (a key lookup and the business's first pass state).
func BenchmarkDuplicateCreateBusiness(b *testing.B) {
	e := servicetest.New(b)
	ada, _ := e.User(b, "ada@example.com")
	ctx := connector(b, ada, "bench")
	in := founding.CreateBusinessInput{Idea: "Maps for hikers and families"}
	_, err := e.Svc.Founding.CreateBusiness(ctx, in)
	require.NoError(b, err)
	b.ResetTimer()
	for range b.N {
		_, err := e.Svc.Founding.CreateBusiness(ctx, in)
		require.NoError(b, err)
	}
}
