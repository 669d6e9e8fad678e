package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"holdco/models"
)

// BenchmarkCreditLedgerPage reads the first page and a page at offset
// 1,000 of a ledger of 10k and of 1M entries: page groups are kept at write
// time, so the two sizes cost about the same.
// go test -run '^$' -bench CreditLedgerPage ./store/
func BenchmarkCreditLedgerPage(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s := benchStore(b)
			cong := uuid.NewString()
			fill(b, s, cong, n)
			for _, offset := range []int{0, 1000} {
				b.Run(fmt.Sprintf("offset=%d", offset), func(b *testing.B) {
					for b.Loop() {
						page, total, err := s.Billing().CreditLedgerPage(ctx, s.SystemConglomerateScope(cong), offset, 20)
						if err != nil || len(page) != 20 || total != int64(n) {
							b.Fatal(err, len(page), total)
						}
					}
				})
			}
		})
	}
}

// fill writes n stand-alone entries with their groups in bulk (the write
// path itself is measured elsewhere).
func fill(b *testing.B, s *Store, cong string, n int) {
	b.Helper()
	start := time.Now().Add(-time.Duration(n) * time.Second)
	const batch = 2000
	for i := 0; i < n; i += batch {
		entries := make([]models.CreditLedgerEntry, 0, batch)
		groups := make([]models.CreditLedgerGroup, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			at := start.Add(time.Duration(j) * time.Second)
			e := models.CreditLedgerEntry{ID: uuid.NewString(), ConglomerateID: cong, Type: models.EntryTopUp, Amount: 1, CreatedAt: at}
			e.GroupKey = GroupKey(e)
			entries = append(entries, e)
			groups = append(groups, models.CreditLedgerGroup{ConglomerateID: cong, GroupKey: e.GroupKey, Type: e.Type, Amount: 1, Entries: 1, FirstAt: at, LastAt: at})
		}
		if err := s.db.CreateInBatches(entries, 500).Error; err != nil {
			b.Fatal(err)
		}
		if err := s.db.CreateInBatches(groups, 500).Error; err != nil {
			b.Fatal(err)
		}
	}
	acct := models.CreditAccount{ConglomerateID: cong, Balance: int64(n), Groups: int64(n), UpdatedAt: time.Now()}
	if err := s.db.Create(&acct).Error; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSpend is the write path: spends per second on one conglomerate.
func BenchmarkSpend(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	cong := uuid.NewString()
	if _, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong), models.CreditLedgerEntry{ConglomerateID: cong, Type: models.EntryTopUp, Amount: 1 << 40}, nil, time.Time{}); err != nil {
		b.Fatal(err)
	}
	run := "run-1"
	for b.Loop() {
		if _, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong), models.CreditLedgerEntry{ConglomerateID: cong, Type: models.EntryToolUsage, Amount: -1, RunID: &run}, nil, time.Now().UTC().Truncate(24*time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore is a migrated SQLite store (the embedded default's database).
func benchStore(b *testing.B) *Store {
	b.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}
