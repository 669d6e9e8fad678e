//go:build unix

package store_test

import (
	"context"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// BenchmarkStatementSpans reads one user by id (one statement) with the
// store's spans off, on but outside a trace, and on inside a sampled
// trace whose spans go to a batching exporter (as OTLP's does), so the
// difference is what a traced read costs.
// Besides wall time each reports cpu-ns/op, the process's CPU time (user
// and system, every goroutine: the batcher, the GC) per read, which a
// machine shared with other work inflates much less than wall time.
// go test -run '^$' -bench StatementSpans -benchmem ./store/
func BenchmarkStatementSpans(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	for _, c := range []struct {
		name    string
		traced  bool // the store has the provider
		inTrace bool // the caller's context has a span
	}{
		{"off", false, true},
		{"on_outside_trace", true, false},
		{"on", true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var opts []store.Option
			if c.traced {
				opts = append(opts, store.WithTracerProvider(tp))
			}
			s := testenv.NewStoreWith(b, slog.New(slog.DiscardHandler), opts...)
			ctx := context.Background()
			iss, sub := "https://idp.example", uuid.NewString()
			u, _, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{
				Email: "bench@example.com", NormalizedEmail: "bench@example.com", Name: "Bench", Issuer: &iss, Subject: &sub,
			}, "Bench's conglomerate")
			if err != nil {
				b.Fatal(err)
			}
			if c.inTrace {
				var span trace.Span
				ctx, span = tp.Tracer("bench").Start(ctx, "caller")
				defer span.End()
			}
			b.Run("read", func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					if _, err := s.Identity().GetUser(ctx, u.ID); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
			// The same read built but not run (GORM's dry run): the
			// callbacks without the database's time, which on a loaded
			// machine hides a span's few microseconds.
			b.Run("dry_run", func(b *testing.B) {
				db := store.GormDB(s).Session(&gorm.Session{DryRun: true}).WithContext(ctx)
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					var got models.User
					if err := db.Where("id = ?", u.ID).Take(&got).Error; err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
		})
	}
}

// cpuStart is the process's CPU time when a measurement began.
type cpuStart time.Duration

func cpuTime(b *testing.B) cpuStart {
	b.Helper()
	return cpuStart(processCPU(b))
}

// report adds cpu-ns/op: the CPU time spent since the start per iteration.
func (c cpuStart) report(b *testing.B) {
	b.Helper()
	b.ReportMetric(float64(processCPU(b)-time.Duration(c))/float64(b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
