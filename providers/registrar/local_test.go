package registrar_test

import (
	"context"
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
