package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// assertSummaryIsTheReads checks that the company's summary
// (CompanySummary: its company_summaries row) gives every figure its own
// read gives.
func assertSummaryIsTheReads(t *testing.T, s *store.Store, sc store.CompanyScope, name string) {
	t.Helper()
	ctx := context.Background()
	day := time.Now().UTC().Truncate(24 * time.Hour)
	sum, err := s.Companies().CompanySummary(ctx, sc, day, store.HeadlineDays{})
	require.NoError(t, err, name)
	files, bytes, err := s.Files().FileUsage(ctx, sc)
	require.NoError(t, err, name)
	assert.Equal(t, [2]int64{files, bytes}, [2]int64{sum.FileCount, sum.FileBytes}, "%s: file usage", name)
	inbox, err := s.Sales().InboxCounts(ctx, sc)
	require.NoError(t, err, name)
	assert.Equal(t, inbox, sum.Inbox, "%s: inbox", name)
	revenue, err := s.Sales().CompanyRevenue(ctx, sc)
	require.NoError(t, err, name)
	assert.Equal(t, revenue, sum.Revenue, "%s: revenue", name)
	domain, ads, err := s.Growth().CompanyGrowth(ctx, sc)
	require.NoError(t, err, name)
	assert.Equal(t, domain, sum.Domain, "%s: domain", name)
	assert.Equal(t, ads, sum.Ads, "%s: ad campaign", name)
	resources, err := s.Companies().ListResources(ctx, sc)
	require.NoError(t, err, name)
	assert.ElementsMatch(t, resources, sum.Resources, "%s: resources", name)
	milestones, err := s.Companies().ListMilestones(ctx, sc)
	require.NoError(t, err, name)
	assert.Equal(t, milestones, sum.Milestones, "%s: milestones", name)
	latest, err := s.Turns().LatestTurn(ctx, sc, false)
	if errors.Is(err, models.ErrNotFound) {
		assert.Nil(t, sum.LastTurn, "%s: last turn", name)
		return
	}
	require.NoError(t, err, name)
	if assert.NotNil(t, sum.LastTurn, "%s: last turn", name) {
		h := models.Turn{ID: latest.ID, CompanyID: latest.CompanyID, ConglomerateID: latest.ConglomerateID, Trigger: latest.Trigger,
			Status: latest.Status, Question: latest.Question, CreditsCost: latest.CreditsCost, StartedAt: latest.StartedAt,
			EndedAt: latest.EndedAt, CreatedAt: latest.CreatedAt, UpdatedAt: latest.UpdatedAt}
		assert.Equal(t, h, *sum.LastTurn, "%s: last turn", name)
	}
}

// summaryWriter makes one company's rows of every summarised kind
// through the store's methods.
type summaryWriter struct {
	t   *testing.T
	s   *store.Store
	sc  store.CompanyScope
	co  models.Company
	ev  models.ActivityInput
	ctx context.Context
}

func newSummaryWriter(t *testing.T, s *store.Store, cong models.Conglomerate, name string) summaryWriter {
	t.Helper()
	ctx := context.Background()
	co, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: name, Handle: handle("sum")})
	require.NoError(t, err)
	return summaryWriter{t: t, s: s, sc: systemScope(t, s, co.ID), co: co, ctx: ctx,
		ev: models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "summary test"}}
}

func (w summaryWriter) email(read bool) {
	e, delivered, err := w.s.Sales().DeliverInboundEmail(w.ctx, w.co.Handle, models.Email{ID: uuid.NewString(), ProviderMessageID: uuid.NewString(),
		FromAddress: "a@example.com", ToAddress: "co@example.com", Subject: "hi", BodyState: models.EmailBodyPresent}, w.ev)
	require.NoError(w.t, err)
	require.True(w.t, delivered)
	if read {
		at := time.Now().UTC()
		_, err := w.s.Sales().GetEmail(w.ctx, w.sc, e.ID, &at)
		require.NoError(w.t, err)
	}
}

func (w summaryWriter) send() {
	e, err := w.s.Sales().ReserveOutgoingEmail(w.ctx, w.sc, models.Email{ID: uuid.NewString(), ProviderMessageID: uuid.NewString(), FromAddress: "co@example.com",
		ToAddress: "a@example.com", Subject: "re: hi"}, time.Now().UTC().Add(-time.Hour), 1<<20)
	require.NoError(w.t, err)
	require.NoError(w.t, w.s.Sales().SetEmailDelivery(w.ctx, w.sc, e.ID, models.EmailSent, nil))
}

func (w summaryWriter) payment(currency string, cents, refund int64) {
	id := "pi_" + uuid.NewString()
	inserted, err := w.s.Sales().RecordCompanyPayment(w.ctx, w.sc, models.CompanyPayment{ID: uuid.NewString(), ProviderAccountID: "acct",
		ProviderPaymentID: id, AmountCents: cents, Currency: currency, PaidAt: time.Now().UTC()})
	require.NoError(w.t, err)
	require.True(w.t, inserted)
	if refund > 0 {
		_, _, err = w.s.Sales().SetPaymentRefunded(w.ctx, w.sc, id, refund)
		require.NoError(w.t, err)
	}
}

func (w summaryWriter) file(path string, size int64) models.CompanyFile {
	key := uuid.NewString()
	require.NoError(w.t, w.s.Files().RecordUploadIntent(w.ctx, w.sc, key, time.Now().Add(time.Hour)))
	f, _, err := w.s.Files().CommitFile(w.ctx, w.sc, models.CompanyFile{Path: path, BlobKey: key, SizeBytes: size, ContentType: "text/plain"}, 1<<40)
	require.NoError(w.t, err)
	return f
}

// turn makes a turn and ends it (waiting with a question, or completed),
// waiting while another writer's turn is active.
func (w summaryWriter) turn(question string) models.Turn {
	for deadline := time.Now().Add(30 * time.Second); ; {
		require.True(w.t, time.Now().Before(deadline), "another writer's turn stayed active")
		tn, err := w.s.Turns().CreateTurn(w.ctx, w.sc, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage,
			Message: "m", Attachments: []string{}}, nil)
		// Another writer's turn is active, or ended between the refusal
		// and CreateTurn's look at it: try again.
		if errors.Is(err, store.ErrTurnActive) || errors.Is(err, models.ErrDuplicate) {
			time.Sleep(time.Millisecond)
			continue
		}
		require.NoError(w.t, err)
		_, err = w.s.Turns().MarkTurnRunning(w.ctx, w.sc, tn.ID, time.Now().UTC())
		require.NoError(w.t, err)
		cost := int64(len(question))
		status := models.TurnCompleted
		if question != "" {
			status = models.TurnWaiting
		}
		tn, _, err = w.s.Turns().FinishTurn(w.ctx, w.sc, tn.ID, "text", models.TurnResult{Status: status, Question: question, CreditsCost: &cost,
			EndedAt: time.Now().UTC()}, w.ev)
		require.NoError(w.t, err)
		return tn
	}
}

func (w summaryWriter) resource(kind models.ResourceKind, status models.ResourceStatus, lastError string) {
	require.NoError(w.t, w.s.Companies().SaveResource(w.ctx, w.sc, models.CompanyResource{Kind: kind, Status: status, Ref: "ref-" + string(kind),
		LastError: lastError}))
}

func (w summaryWriter) ads(change func(a *models.AdCampaign)) {
	_, err := w.s.Growth().UpdateAdCampaign(w.ctx, w.sc, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		change(a)
		return nil, nil
	})
	require.NoError(w.t, err)
}

func (w summaryWriter) domain(name string, attach bool) models.DomainPurchase {
	p, err := w.s.Growth().CreateDomainPurchase(w.ctx, w.sc, models.DomainPurchase{Domain: name, PriceCents: 1200, Currency: "usd",
		State: models.DomainOrderPending})
	require.NoError(w.t, err)
	o := store.DomainOutcome{Registered: true, At: time.Now().UTC()}
	if attach {
		o.AttachTo = w.co.ID
	}
	p, _, err = w.s.Growth().FinishDomainPurchase(w.ctx, w.s.SystemConglomerateScope(w.co.ConglomerateID), p.ID, o, w.ev)
	require.NoError(w.t, err)
	return p
}

// Writers of every kind run in parallel on three companies of two
// accounts, several on each company's same rows (its summary row is
// every writer's): afterwards each company's summary is what its own
// reads give, and the counts are the writes made (no update lost), on
// both databases.
func TestSummaryKeepsEveryConcurrentWrite(t *testing.T) {
	s := testenv.NewStore(t)
	_, ada := signUp(t, s, "ada-sum")
	_, bob := signUp(t, s, "bob-sum")
	ws := []summaryWriter{newSummaryWriter(t, s, ada, "Ada One"), newSummaryWriter(t, s, ada, "Ada Two"), newSummaryWriter(t, s, bob, "Bob One")}

	const rounds = 6
	var wg sync.WaitGroup
	for i, w := range ws {
		for g := range 2 {
			wg.Go(func() {
				for r := range rounds {
					w.email(r%2 == 0)
					w.send()
					w.payment(models.SalesCurrency, 1000, int64(100*r))
				}
			})
			wg.Go(func() {
				for r := range rounds {
					w.payment("eur", 500, 0)
					w.file(fmt.Sprintf("g%d/f%d.txt", g, r), int64(10+r))
					w.ads(func(a *models.AdCampaign) { a.TotalSpent += 5; a.TotalClicks++; a.DailyCap = int64(10 * (r + 1)) })
				}
			})
			wg.Go(func() {
				for r := range rounds {
					tn := w.turn(fmt.Sprintf("q%d-%d", g, r))
					if r%3 == 2 {
						// An operator deletes the newest turn while the
						// other writer makes its next one.
						require.NoError(t, store.GormDB(s).Exec("DELETE FROM turns WHERE id = ?", tn.ID).Error)
					}
				}
			})
		}
		wg.Go(func() {
			for r := range rounds {
				for _, k := range models.ResourceKinds {
					status, lastError := models.ResourceReady, ""
					if (r+len(k))%3 == 0 {
						status, lastError = models.ResourceFailed, fmt.Sprintf("boom %d", r)
					}
					w.resource(k, status, lastError)
				}
			}
			w.domain(fmt.Sprintf("sum-%d-%s.com", i, uuid.NewString()[:6]), true)
			_, err := s.Companies().ReachMilestone(w.ctx, w.sc, models.MilestoneFirstDollar, time.Now().UTC())
			require.NoError(t, err)
		})
	}
	wg.Wait()
	for _, w := range ws {
		assertSummaryIsTheReads(t, s, w.sc, w.co.Name)
		sum, err := s.Companies().CompanySummary(context.Background(), w.sc, time.Now().UTC(), store.HeadlineDays{})
		require.NoError(t, err)
		assert.Equal(t, models.InboxCounts{Total: 4 * rounds, Unread: rounds, Received: 2 * rounds, Sent: 2 * rounds}, sum.Inbox, w.co.Name)
		assert.EqualValues(t, 2*rounds, sum.Revenue.Payments, w.co.Name)
		assert.EqualValues(t, 2*rounds*1000, sum.Revenue.GrossCents, w.co.Name)
		assert.EqualValues(t, 2*rounds, sum.FileCount, w.co.Name)
		if assert.NotNil(t, sum.Ads, w.co.Name) {
			assert.EqualValues(t, 2*rounds*5, sum.Ads.TotalSpent, w.co.Name)
			assert.EqualValues(t, 2*rounds, sum.Ads.TotalClicks, w.co.Name)
		}
	}
}

// On Postgres a turn's trigger locks the company's summary row before it
// reads the newest turn: a turn deleted while an older one is inserted
// by a transaction still open then reads the inserted turn once that
// commits. Without the lock the delete's read (its snapshot taken before
// the insert committed) would write the turn before both as the newest.
func TestSummaryNewestTurnWhenTheNewestIsDeletedDuringAnInsert(t *testing.T) {
	s := testenv.NewStore(t)
	if s.Dialect() != store.DialectPostgres {
		t.Skip("SQLite has one writer at a time")
	}
	_, cong := signUp(t, s, "ada-race")
	w := newSummaryWriter(t, s, cong, "Race Co")
	older := w.turn("older?")
	newest := w.turn("newest?")
	db := store.GormDB(s)

	tx := db.Begin()
	require.NoError(t, tx.Error)
	defer tx.Rollback()
	// The summary's triggers run at the commit; here at once, so that
	// this transaction holds the company's row while the delete commits.
	require.NoError(t, tx.Exec("SET CONSTRAINTS ALL IMMEDIATE").Error)
	between := older.CreatedAt.Add(newest.CreatedAt.Sub(older.CreatedAt) / 2)
	inserted := models.Turn{ID: uuid.NewString(), CompanyID: w.co.ID, ConglomerateID: cong.ID, SessionID: uuid.NewString(),
		Trigger: models.TriggerMessage, Status: models.TurnCompleted, Attachments: []string{}, CreatedAt: between, UpdatedAt: between}
	require.NoError(t, tx.Create(&inserted).Error)

	deleted := make(chan error, 1)
	go func() { deleted <- db.Exec("DELETE FROM turns WHERE id = ?", newest.ID).Error }()
	select {
	case err := <-deleted:
		t.Fatalf("the delete did not wait for the insert's transaction: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, tx.Commit().Error)
	require.NoError(t, <-deleted)
	sum, err := s.Companies().CompanySummary(context.Background(), w.sc, time.Now().UTC(), store.HeadlineDays{})
	require.NoError(t, err)
	if assert.NotNil(t, sum.LastTurn) {
		assert.Equal(t, inserted.ID, sum.LastTurn.ID)
	}
	assertSummaryIsTheReads(t, s, w.sc, "after the delete")
}

// Migration 0039 summarises the companies that exist when it runs from
// their rows (the triggers are not there yet while they are written), and
// its triggers keep the summary from then on.
func TestMigrationSummarisesExistingCompanies(t *testing.T) {
	s := testenv.NewStore(t)
	db := store.GormDB(s)
	require.NoError(t, store.Migration0039().Rollback(db))
	_, cong := signUp(t, s, "ada-m39")
	busy, empty := newSummaryWriter(t, s, cong, "Busy Co"), newSummaryWriter(t, s, cong, "Empty Co")
	busy.email(true)
	busy.email(false)
	busy.send()
	busy.payment(models.SalesCurrency, 1500, 500)
	busy.payment("eur", 900, 0)
	busy.file("a.txt", 100)
	busy.ads(func(a *models.AdCampaign) { a.DailyCap, a.State, a.TotalSpent = 25, models.AdActive, 7 })
	busy.domain("busy-"+uuid.NewString()[:6]+".com", true)
	busy.resource(models.ResourceRepository, models.ResourceReady, "")
	busy.resource(models.ResourceHosting, models.ResourceFailed, "boom")
	_, err := s.Companies().ReachMilestone(context.Background(), busy.sc, models.MilestoneFirstDollar, time.Now().UTC())
	require.NoError(t, err)
	busy.turn("older?")
	busy.turn("newest?")

	require.NoError(t, store.Migration0039().Migrate(db))
	assertSummaryIsTheReads(t, s, busy.sc, "busy company after the migration")
	assertSummaryIsTheReads(t, s, empty.sc, "empty company after the migration")

	busy.email(false)
	busy.turn("")
	empty.payment(models.SalesCurrency, 300, 0)
	later := newSummaryWriter(t, s, cong, "Later Co")
	later.file("b.txt", 5)
	assertSummaryIsTheReads(t, s, busy.sc, "busy company written after the migration")
	assertSummaryIsTheReads(t, s, empty.sc, "empty company written after the migration")
	assertSummaryIsTheReads(t, s, later.sc, "company made after the migration")
}

// The summary has the columns of every resource and milestone kind: a
// kind added to models/ needs a migration that adds its columns and
// recreates the triggers (migration 0039's kinds are a snapshot).
func TestSummaryCoversEveryKind(t *testing.T) {
	s := testenv.NewStore(t)
	m := store.GormDB(s).Migrator()
	for _, k := range models.ResourceKinds {
		for _, col := range []string{"status", "ref", "last_error", "attempts", "updated_at"} {
			assert.True(t, m.HasColumn("company_summaries", "resource_"+string(k)+"_"+col), "resource kind %s has no summary columns", k)
		}
	}
	for _, k := range models.MilestoneKinds {
		for _, col := range []string{"reached_at", "seen_at"} {
			assert.True(t, m.HasColumn("company_summaries", "milestone_"+string(k)+"_"+col), "milestone kind %s has no summary columns", k)
		}
	}
}
