package registrar_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/registrar"
)

func TestLocalRegistrar(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	r, err := registrar.NewLocal(dir, time.Minute, func() time.Time { return now })
	require.NoError(t, err)
	a, err := r.Search(ctx, []string{"google.com", "abc.io", "tea.unknowntld", "greenleafshop.com"})
	require.NoError(t, err)
	assert.Equal(t, "taken", a[0].Reason)
	assert.True(t, a[1].Premium)
	assert.Equal(t, 20*registrar.PricesCents["io"], a[1].PriceCents)
	assert.Equal(t, "tld_not_offered", a[2].Reason)
	again, err := r.Search(ctx, []string{"greenleafshop.com"})
	require.NoError(t, err)
	assert.Equal(t, a[3], again[0], "deterministic")

	var free string
	for _, d := range []string{"greenleafshop.com", "greenleafshop.net", "greenleafshop.org", "greenleafshop.dev"} {
		if x, _ := r.Search(ctx, []string{d}); x[0].Available {
			free = d
			break
		}
	}
	require.NotEmpty(t, free)
	id, err := r.Register(ctx, free, "p1")
	require.NoError(t, err)
	id2, err := r.Register(ctx, free, "p1")
	require.NoError(t, err)
	assert.Equal(t, id, id2, "keyed")
	st, err := r.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, models.OrderPending, st.State)
	now = now.Add(time.Minute)
	// A restart keeps the order.
	r2, err := registrar.NewLocal(dir, time.Minute, func() time.Time { return now })
	require.NoError(t, err)
	st, err = r2.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, models.OrderRegistered, st.State)
	x, err := r2.Search(ctx, []string{free})
	require.NoError(t, err)
	assert.False(t, x[0].Available, "an ordered name is taken")
	other, err := r2.Register(ctx, free, "p2")
	require.NoError(t, err)
	st, err = r2.Status(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, models.OrderFailed, st.State)
	_, err = r2.Status(ctx, "nope")
	assert.ErrorIs(t, err, registrar.ErrUnknownOrder)
}

// TestOrderRetriedAfterACrashBetweenItsWritesKeepsTheName: an order marks
// its name, then writes its order file. A crash between the two leaves
// the marker alone; the retried order (same key) must register the name —
// not see its own marker as "taken", fail, and lock the name for everyone.
func TestOrderRetriedAfterACrashBetweenItsWritesKeepsTheName(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	r, err := registrar.NewLocal(dir, time.Minute, func() time.Time { return now })
	require.NoError(t, err)
	var free string
	for _, d := range []string{"crashproofbakery.com", "crashproofbakery.net", "crashproofbakery.org", "crashproofbakery.dev"} {
		if x, _ := r.Search(ctx, []string{d}); x[0].Available {
			free = d
			break
		}
	}
	require.NotEmpty(t, free)

	// What the crash leaves: the first write (the marker, naming the
	// order's key) without the second (the order file).
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "domains"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "domains", free), []byte("order-1"), 0o644))
	x, err := r.Search(ctx, []string{free})
	require.NoError(t, err)
	assert.False(t, x[0].Available, "held by the order in flight")

	id, err := r.Register(ctx, free, "order-1")
	require.NoError(t, err)
	st, err := r.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, models.OrderPending, st.State, "the retried order keeps its name: %s", st.Reason)
	now = now.Add(time.Minute)
	st, err = r.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, models.OrderRegistered, st.State)

	other, err := r.Register(ctx, free, "order-2")
	require.NoError(t, err)
	st, err = r.Status(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, models.OrderFailed, st.State, "another order still cannot take it")
}

// TestConcurrentOrdersForOneNameRegisterOnce: two registrars on the same
// directory (two processes) ordering one name: exactly one order holds it.
func TestConcurrentOrdersForOneNameRegisterOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var free string
	r0, err := registrar.NewLocal(dir, 0, nil)
	require.NoError(t, err)
	for _, d := range []string{"raceproofbakery.com", "raceproofbakery.net", "raceproofbakery.org", "raceproofbakery.dev"} {
		if x, _ := r0.Search(ctx, []string{d}); x[0].Available {
			free = d
			break
		}
	}
	require.NotEmpty(t, free)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		r, err := registrar.NewLocal(dir, 0, nil)
		require.NoError(t, err)
		wg.Go(func() {
			id, err := r.Register(ctx, free, "race-"+strconv.Itoa(i))
			assert.NoError(t, err)
			ids[i] = id
		})
	}
	wg.Wait()
	registered := 0
	for _, id := range ids {
		st, err := r0.Status(ctx, id)
		require.NoError(t, err)
		if st.State == models.OrderRegistered {
			registered++
		}
	}
	assert.Equal(t, 1, registered)
}
