package growth_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// The commit → workflow seams: a request that signals (or starts) clears
// its row's mark; a row a crash left marked is started or signalled by the
// sweeper, once.
func TestWorkflowSeamsSurviveACrash(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil) // no worker: the workflows only need to exist
	crashed := servicetest.New(t)      // a process that committed, then died before Temporal
	ctx := context.Background()
	ada, cong := crashed.User(t, "ada@example.com")
	co, err := crashed.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Seam Tea"})
	require.NoError(t, err)
	_, err = crashed.Svc.GrantCredits(ctx, crashed.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 50, "t")
	require.NoError(t, err)
	_, err = crashed.Svc.Growth.SetDailyCap(ada, co.ID, 3)
	require.NoError(t, err)
	w := &world{e: crashed, ada: ada, adaCong: cong, shop: co.ID}
	p := w.buy(t, ada, co.ID, freeName(t, w, co.ID, "seamtea"))

	sw := &growth.Sweeper{Store: crashed.Store, Temporal: tmp.Client, Logger: slog.New(slog.DiscardHandler)}
	n, err := sw.Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one domain workflow started, one reconciler signalled")
	n, err = sw.Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing twice")
	_, err = tmp.Client.DescribeWorkflowExecution(ctx, contract.DomainWorkflowID(p.ID), "")
	require.NoError(t, err)
	_, err = tmp.Client.DescribeWorkflowExecution(ctx, contract.AdsWorkflowID(co.ID), "")
	require.NoError(t, err)

	// A live process clears the mark itself.
	live := crashed.NewServices(t, usecases.Options{Temporal: tmp.Client})
	_, err = live.Growth.SetDailyCap(ada, co.ID, 4)
	require.NoError(t, err)
	pending, err := crashed.Store.Growth().PendingAdReconciles(ctx, time.Now().Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Empty(t, pending)
}
