package companies_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/servicetest"
	"holdco/store"
	"holdco/testenv"
)

// dashboardWorld is one account with one company whose data is seeded in
// bulk: n activity events, n documents and 10·n ledger entries.
type dashboardWorld struct {
	e       *servicetest.Env
	ctx     context.Context
	company models.Company
}

func newDashboardWorld(tb testing.TB, n int) dashboardWorld {
	tb.Helper()
	e := servicetest.New(tb)
	ctx, cong := e.User(tb, "dash@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Dash"})
	require.NoError(tb, err)
	seedCompany(tb, e, cong, c.ID, n)
	return dashboardWorld{e: e, ctx: ctx, company: c}
}

func seedCompany(tb testing.TB, e *servicetest.Env, cong, companyID string, n int) {
	tb.Helper()
	start := time.Now().UTC().Add(-time.Duration(n) * time.Minute).Truncate(time.Microsecond)
	events := make([][]any, 0, n)
	docs := make([][]any, 0, n)
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		id, _ := uuid.NewV7()
		events = append(events, []any{id.String(), companyID, string(models.ActivityDocumentUpdated), "user", fmt.Sprintf("event %d", i), "", "{}", at})
		docs = append(docs, []any{companyID, fmt.Sprintf("doc-%05d", i), "Doc", "content", "visible", 7, 1, "user", at, at})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "activity_events",
		[]string{"id", "company_id", "kind", "actor", "summary", "subject", "data", "created_at"}, events)
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "company_documents",
		[]string{"company_id", "document_type", "title", "content", "visibility", "size_bytes", "revision", "updated_by", "created_at", "updated_at"}, docs)
	entries := make([][]any, 0, 10*n)
	for i := range 10 * n {
		entries = append(entries, []any{uuid.NewString(), cong, string(models.EntryTopUp), 1, companyID, "", fmt.Sprintf("k%d", i), start.Add(time.Duration(i) * time.Second)})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "credit_ledger_entries",
		[]string{"id", "conglomerate_id", "type", "amount", "company_id", "reference", "group_key", "created_at"}, entries)
}

// The dashboard runs the same number of queries for a company with a
// handful of rows as for one with hundreds: its cost does not grow with
// the data.
func TestDashboardQueryCountDoesNotGrowWithData(t *testing.T) {
	counts := map[int]int64{}
	for _, n := range []int{3, 300} {
		w := newDashboardWorld(t, n)
		ctx, queries := store.WithQueryCount(w.ctx)
		d, err := w.e.Svc.Dashboard(ctx, w.company.ID)
		require.NoError(t, err)
		counts[n] = queries.Load()
		assert.Len(t, d.RecentActivity, min(n+1, companies.DashboardActivity))
		assert.Len(t, d.Documents, min(n, companies.DashboardDocuments))
		assert.Equal(t, n > companies.DashboardDocuments, d.DocumentsMore)
		assert.Equal(t, w.company.ID, d.Company.ID)
		assert.Len(t, d.Resources, len(models.ResourceKinds))
	}
	assert.Equal(t, counts[3], counts[300], "the query count is independent of the data")
	// 3: the company with the one-row part (figures, resources,
	// milestones, last turn, the analytics headline's sums), the
	// membership (this principal was not resolved from a credential) and
	// the three lists (activity, documents, open tasks).
	assert.LessOrEqual(t, counts[3], int64(3), "one query for the lists, one for everything else")
}

func TestDashboardShowsTheCompanysState(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Ada Dash"})
	require.NoError(t, err)
	_, _, err = e.Svc.Documents.Upsert(ada, c.ID, models.DocMission, documents.UpsertInput{Content: "Make tea."})
	require.NoError(t, err)
	_, _, err = e.Svc.Documents.Upsert(ada, c.ID, "agent_notes", documents.UpsertInput{Content: "hidden"})
	require.NoError(t, err)

	d, err := e.Svc.Dashboard(ada, c.ID)
	require.NoError(t, err)
	assert.False(t, d.Ready, "nothing provisioned in this world")
	require.Len(t, d.Documents, 1)
	assert.Equal(t, models.DocMission, d.Documents[0].DocumentType)
	require.Len(t, d.RecentActivity, 3)
	assert.Equal(t, models.ActivityDocumentUpdated, d.RecentActivity[0].Kind)
	assert.Equal(t, models.ActivityCompanyCreated, d.RecentActivity[2].Kind)
	require.NotNil(t, d.Milestones.NextGoal)
	assert.Empty(t, d.Milestones.Achieved)

	_, err = e.Svc.Dashboard(bob, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.Dashboard(ada, uuid.NewString())
	assert.True(t, models.IsCode(err, models.CodeNotFound))
}

// BenchmarkDashboard reads the dashboard of a company with 10 rows of each
// kind and of one with 10k activity events, 1k files, 1k documents and
// 100k ledger entries; the ratio shows the cost does not grow with the data.
// go test -run '^$' -bench Dashboard ./service/companies/
func BenchmarkDashboard(b *testing.B) {
	for _, size := range []struct {
		name                    string
		events, files, docs, le int
	}{{"small", 10, 10, 10, 10}, {"large", 10_000, 1_000, 1_000, 100_000}} {
		b.Run(size.name, func(b *testing.B) {
			e := servicetest.New(b)
			ctx, cong := e.User(b, "bench@example.com")
			c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Bench"})
			require.NoError(b, err)
			seedSizes(b, e, cong, c.ID, size.events, size.files, size.docs, size.le)
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := e.Svc.Dashboard(ctx, c.ID); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}

func seedSizes(tb testing.TB, e *servicetest.Env, cong, companyID string, events, files, docs, ledger int) {
	tb.Helper()
	start := time.Now().UTC().Add(-240 * time.Hour).Truncate(time.Microsecond)
	rows := make([][]any, 0, events)
	for i := range events {
		id, _ := uuid.NewV7()
		rows = append(rows, []any{id.String(), companyID, string(models.ActivityDocumentUpdated), "user", "event", "", "{}", start.Add(time.Duration(i) * time.Second)})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "activity_events", []string{"id", "company_id", "kind", "actor", "summary", "subject", "data", "created_at"}, rows)
	rows = rows[:0]
	for i := range files {
		rows = append(rows, []any{uuid.NewString(), companyID, fmt.Sprintf("dir/file-%05d.txt", i), uuid.NewString(), 100, "text/plain", "upload", start, start})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "company_files",
		[]string{"id", "company_id", "path", "blob_key", "size_bytes", "content_type", "source", "created_at", "updated_at"}, rows)
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "company_file_usage", []string{"company_id", "file_count", "bytes"},
		[][]any{{companyID, files, 100 * files}})
	rows = rows[:0]
	for i := range docs {
		rows = append(rows, []any{companyID, fmt.Sprintf("doc-%05d", i), "Doc", "content", "visible", 7, 1, "user", start, start})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "company_documents",
		[]string{"company_id", "document_type", "title", "content", "visibility", "size_bytes", "revision", "updated_by", "created_at", "updated_at"}, rows)
	rows = rows[:0]
	for i := range ledger {
		rows = append(rows, []any{uuid.NewString(), cong, string(models.EntryTopUp), 1, companyID, "", fmt.Sprintf("k%d", i), start.Add(time.Duration(i) * time.Millisecond)})
	}
	testenv.BulkInsert(tb, e.SQL, e.Placeholder, "credit_ledger_entries",
		[]string{"id", "conglomerate_id", "type", "amount", "company_id", "reference", "group_key", "created_at"}, rows)
}

// The dashboard's one-row statement (store.CompanySummary: the company's
// summary row, kept by triggers) gives every figure as its own read does,
// after each kind of write: resources saved, failing and ready again, a
// milestone reached and seen, turns created, waiting, ended and deleted
// (an operator's statement, no store method), emails received, read and
// sent, payments in and out of the sales currency and a refund, files
// stored, replaced and deleted, a domain attached, detached and attached
// again, an ad campaign made and changed.
func TestDashboardSummaryReadsAsTheLists(t *testing.T) {
	e := servicetest.New(t)
	ctx, c, sc := ownCompany(t, e, "sum@example.com", "Sum")
	bg := context.Background()

	check := func(name string) {
		t.Helper()
		d, err := e.Svc.Dashboard(ctx, c.ID)
		require.NoError(t, err, name)
		views, err := e.Svc.CompanyResources(ctx, c.ID)
		require.NoError(t, err, name)
		assert.Equal(t, views, d.Resources, name)
		shelf, err := e.Svc.Milestones(ctx, c.ID)
		require.NoError(t, err, name)
		assert.Equal(t, shelf, d.Milestones, name)
		// The one-row figures, as their own reads give them.
		credits, err := e.Store.Companies().CompanyAccountCredits(bg, sc, time.Now().UTC().Truncate(24*time.Hour))
		require.NoError(t, err, name)
		assert.Equal(t, credits, d.Credits, name)
		files, bytes, err := e.Store.Files().FileUsage(bg, sc)
		require.NoError(t, err, name)
		assert.Equal(t, [2]int64{files, bytes}, [2]int64{d.FileCount, d.FileBytes}, name)
		inbox, err := e.Store.Sales().InboxCounts(bg, sc)
		require.NoError(t, err, name)
		assert.Equal(t, inbox, d.Inbox, name)
		revenue, err := e.Store.Sales().CompanyRevenue(bg, sc)
		require.NoError(t, err, name)
		assert.Equal(t, revenue, d.Revenue, name)
		domain, ads, err := e.Store.Growth().CompanyGrowth(bg, sc)
		require.NoError(t, err, name)
		assert.Equal(t, domain, d.Domain, name)
		assert.Equal(t, ads, d.Ads, name)
		latest, err := e.Store.Turns().LatestTurn(bg, sc, false)
		if errors.Is(err, models.ErrNotFound) {
			assert.Nil(t, d.LastTurn, name)
			return
		}
		require.NoError(t, err, name)
		require.NotNil(t, d.LastTurn, name)
		headline := latest
		headline.SessionID, headline.TaskID, headline.Message, headline.Attachments, headline.IdempotencyKey = "", nil, "", nil, nil
		headline.Text, headline.Answer, headline.ErrorCode, headline.ErrorDetail, headline.SkipCreditCheck = "", "", "", "", false
		assert.Equal(t, headline, *d.LastTurn, name)
	}
	check("nothing yet")

	at := time.Now().UTC().Truncate(time.Microsecond)
	require.NoError(t, e.Store.Companies().SaveResource(bg, sc, models.CompanyResource{CompanyID: c.ID,
		Kind: models.ResourceRepository, Status: models.ResourceReady, Ref: "https://git.example.com/sum.git", Attempts: 1, UpdatedAt: at}))
	require.NoError(t, e.Store.Companies().SaveResource(bg, sc, models.CompanyResource{CompanyID: c.ID,
		Kind: models.ResourceHosting, Status: models.ResourceFailed, Ref: "/srv/sites/sum", LastError: "boom", Attempts: 3, UpdatedAt: at}))
	_, err := e.Store.Companies().ReachMilestone(bg, sc, models.MilestoneFirstDollar, at)
	require.NoError(t, err)
	first, err := e.Store.Turns().CreateTurn(bg, sc, models.Turn{ConglomerateID: c.ConglomerateID, SessionID: uuid.NewString(),
		Trigger: models.TriggerMessage, Status: models.TurnQueued, Message: "hello", Attachments: []string{}}, nil)
	require.NoError(t, err)
	cost := int64(7)
	_, _, err = e.Store.Turns().FinishTurn(bg, sc, first.ID, "text", models.TurnResult{Status: models.TurnWaiting,
		Answer: "answer", Question: "Which colour?", CreditsCost: &cost, EndedAt: at}, models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "turn ended"})
	require.NoError(t, err)
	check("one waiting turn, two resources, a milestone")

	second, err := e.Store.Turns().CreateTurn(bg, sc, models.Turn{ConglomerateID: c.ConglomerateID, SessionID: uuid.NewString(),
		Trigger: models.TriggerMessage, Status: models.TurnQueued, Message: "again", Attachments: []string{}}, nil)
	require.NoError(t, err)
	check("a newer turn")
	_, err = e.Store.Turns().MarkTurnRunning(bg, sc, second.ID, time.Now().UTC())
	require.NoError(t, err)
	check("the newer turn running")
	require.NoError(t, e.Store.Turns().SetTurnText(bg, sc, second.ID, "so far"))
	check("the newer turn's text")
	_, _, err = e.Store.Turns().FinishTurn(bg, sc, second.ID, "done", models.TurnResult{Status: models.TurnCompleted, Answer: "ok",
		EndedAt: time.Now().UTC()}, models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "turn ended"})
	require.NoError(t, err)
	check("the newer turn ended")
	_, err = e.SQL.ExecContext(bg, e.Rebind("DELETE FROM turns WHERE id = ?"), second.ID)
	require.NoError(t, err)
	check("the newest turn deleted by hand: the one before is the newest again")
	_, err = e.SQL.ExecContext(bg, e.Rebind("DELETE FROM turns WHERE id = ?"), first.ID)
	require.NoError(t, err)
	check("no turn left")

	require.NoError(t, e.Store.Companies().SaveResource(bg, sc, models.CompanyResource{CompanyID: c.ID,
		Kind: models.ResourceRepository, Status: models.ResourceFailed, LastError: "disk full", UpdatedAt: at}))
	check("a resource failing")
	require.NoError(t, e.Store.Companies().SaveResource(bg, sc, models.CompanyResource{CompanyID: c.ID,
		Kind: models.ResourceHosting, Status: models.ResourceReady, Ref: "/srv/sites/sum", UpdatedAt: at}))
	check("a resource ready again")
	_, err = e.Store.Companies().MarkMilestonesSeen(bg, sc, time.Now().UTC())
	require.NoError(t, err)
	check("the milestone seen")

	in, delivered, err := e.Store.Sales().DeliverInboundEmail(bg, c.Handle, models.Email{ID: uuid.NewString(), ProviderMessageID: "m1",
		FromAddress: "a@example.com", ToAddress: "sum@example.com", Subject: "hi", BodyState: models.EmailBodyPresent},
		models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "mail"})
	require.NoError(t, err)
	require.True(t, delivered)
	_, _, err = e.Store.Sales().DeliverInboundEmail(bg, c.Handle, models.Email{ID: uuid.NewString(), ProviderMessageID: "m2",
		FromAddress: "b@example.com", ToAddress: "sum@example.com", Subject: "hello", BodyState: models.EmailBodyPresent},
		models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "mail"})
	require.NoError(t, err)
	check("two emails received")
	readAt := time.Now().UTC()
	_, err = e.Store.Sales().GetEmail(bg, sc, in.ID, &readAt)
	require.NoError(t, err)
	check("an email read")
	out, err := e.Store.Sales().ReserveOutgoingEmail(bg, sc, models.Email{ID: uuid.NewString(), FromAddress: "sum@example.com",
		ToAddress: "a@example.com", Subject: "re: hi"}, time.Now().UTC().Add(-time.Hour), 100)
	require.NoError(t, err)
	require.NoError(t, e.Store.Sales().SetEmailDelivery(bg, sc, out.ID, models.EmailSent, nil))
	check("an email sent")
	_, err = e.SQL.ExecContext(bg, e.Rebind("DELETE FROM company_emails WHERE id = ?"), in.ID)
	require.NoError(t, err)
	check("an email deleted by hand")

	pay := func(id, currency string, cents int64) {
		t.Helper()
		inserted, err := e.Store.Sales().RecordCompanyPayment(bg, sc, models.CompanyPayment{ID: uuid.NewString(), ProviderAccountID: "acct",
			ProviderPaymentID: id, AmountCents: cents, Currency: currency, PaidAt: time.Now().UTC()})
		require.NoError(t, err)
		require.True(t, inserted)
	}
	pay("pi_1", models.SalesCurrency, 1500)
	pay("pi_2", "eur", 900)
	pay("pi_3", models.SalesCurrency, 200)
	check("payments, one in another currency")
	_, _, err = e.Store.Sales().SetPaymentRefunded(bg, sc, "pi_1", 500)
	require.NoError(t, err)
	_, _, err = e.Store.Sales().SetPaymentRefunded(bg, sc, "pi_2", 900)
	require.NoError(t, err)
	check("refunds")

	commit := func(path string, size int64) models.CompanyFile {
		t.Helper()
		key := uuid.NewString()
		require.NoError(t, e.Store.Files().RecordUploadIntent(bg, sc, key, time.Now().Add(time.Hour)))
		f, _, err := e.Store.Files().CommitFile(bg, sc, models.CompanyFile{Path: path, BlobKey: key, SizeBytes: size, ContentType: "text/plain"}, 1<<30)
		require.NoError(t, err)
		return f
	}
	commit("a.txt", 100)
	b := commit("b.txt", 50)
	check("two files")
	commit("a.txt", 30)
	check("a file replaced by a smaller one")
	_, err = e.Store.Files().DeleteFile(bg, sc, b.ID)
	require.NoError(t, err)
	check("a file deleted")

	cong := e.Store.SystemConglomerateScope(c.ConglomerateID)
	domain := func(name string) models.DomainPurchase {
		t.Helper()
		p, err := e.Store.Growth().CreateDomainPurchase(bg, sc, models.DomainPurchase{Domain: name, PriceCents: 1200, Currency: "usd",
			State: models.DomainOrderPending})
		require.NoError(t, err)
		return p
	}
	ev := models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: models.ActorSystem, Summary: "domain"}
	d1, d2 := domain("sum-one.com"), domain("sum-two.com")
	check("two domains ordered, none attached")
	_, _, err = e.Store.Growth().FinishDomainPurchase(bg, cong, d1.ID, store.DomainOutcome{Registered: true, At: time.Now().UTC(), AttachTo: c.ID}, ev)
	require.NoError(t, err)
	_, _, err = e.Store.Growth().FinishDomainPurchase(bg, cong, d2.ID, store.DomainOutcome{Registered: true, At: time.Now().UTC()}, ev)
	require.NoError(t, err)
	check("a domain registered and attached")
	_, err = e.Store.Growth().DetachDomain(bg, sc, d1.ID, ev)
	require.NoError(t, err)
	check("the domain detached")
	_, err = e.Store.Growth().AttachDomain(bg, sc, d2.ID, ev)
	require.NoError(t, err)
	check("the other domain attached")
	_, err = e.Store.Growth().AttachDomain(bg, sc, d1.ID, ev)
	require.NoError(t, err)
	check("the first domain attached in its place")

	_, err = e.Store.Growth().UpdateAdCampaign(bg, sc, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		a.DailyCap, a.State = 25, models.AdActive
		return nil, nil
	})
	require.NoError(t, err)
	check("an ad campaign made")
	_, err = e.Store.Growth().UpdateAdCampaign(bg, sc, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		a.TotalSpent, a.TotalClicks, a.CreativeVersion, a.State = 40, 3, 2, models.AdPaused
		return nil, nil
	})
	require.NoError(t, err)
	check("the campaign's spend, clicks, creative and state changed")
}

// The dashboard's lists statement (store.DashboardLists) gives what the
// three reads it replaces give: ListActivity's first page,
// RecentDocuments (internal documents left out, whether there are more)
// and OpenTasks (done, failed and cancelled ones left out; a due date, a
// run and a failure reason kept), with equal timestamps among the rows.
func TestDashboardListsReadAsTheirOwnReads(t *testing.T) {
	e := servicetest.New(t)
	_, c, sc := ownCompany(t, e, "lists@example.com", "Lists")
	st := e.Store.Companies()

	check := func(name string) {
		t.Helper()
		bg := context.Background()
		got, err := st.DashboardLists(bg, sc, companies.DashboardActivity, companies.DashboardDocuments, companies.DashboardOpenTasks)
		require.NoError(t, err, name)
		activity, err := st.ListActivity(bg, sc, models.ActivityCursor{}, companies.DashboardActivity)
		require.NoError(t, err, name)
		docs, more, err := st.RecentDocuments(bg, sc, companies.DashboardDocuments)
		require.NoError(t, err, name)
		tasks, err := st.OpenTasks(bg, sc, companies.DashboardOpenTasks)
		require.NoError(t, err, name)
		assert.Equal(t, activity, got.Activity, name)
		assert.Equal(t, more, got.DocumentsMore, name)
		assert.Equal(t, tasks, got.OpenTasks, name)
		// RecentDocuments orders by updated_at only: rows with the same
		// time may come in either order.
		key := func(d models.DocumentSummary) string { return d.UpdatedAt.Format(time.RFC3339Nano) + d.DocumentType }
		slices.SortFunc(docs, func(a, b models.DocumentSummary) int { return -strings.Compare(key(a), key(b)) })
		gotDocs := slices.Clone(got.Documents)
		slices.SortFunc(gotDocs, func(a, b models.DocumentSummary) int { return -strings.Compare(key(a), key(b)) })
		assert.Equal(t, docs, gotDocs, name)
	}
	check("a new company")

	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	var events, docs, tasks [][]any
	for i := range 30 {
		same := at.Add(time.Duration(i/3) * time.Minute) // three rows share each time
		id, _ := uuid.NewV7()
		events = append(events, []any{id.String(), c.ID, string(models.ActivityDocumentUpdated), "user", fmt.Sprintf("event %d", i),
			fmt.Sprintf("s%d", i), `{"n":1}`, same})
		visibility := models.DocumentVisible
		if i%4 == 0 {
			visibility = "internal"
		}
		docs = append(docs, []any{c.ID, fmt.Sprintf("doc-%02d", i), fmt.Sprintf("Doc %d", i), "content", string(visibility), 10 + i, i, "agent", same, same})
		status := models.OpenTaskStatuses[i%len(models.OpenTaskStatuses)]
		if i%5 == 0 {
			status = models.TaskDone
		}
		var due, run any
		reason := ""
		if i%2 == 0 {
			due, run, reason = same.Add(48*time.Hour), uuid.NewString(), "why"
		}
		tid, _ := uuid.NewV7()
		tasks = append(tasks, []any{tid.String(), c.ID, fmt.Sprintf("Task %d", i), "desc", string(status), string(models.TaskPriorityHigh), "user",
			due, run, reason, same, same.Add(time.Second)})
	}
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "activity_events", []string{"id", "company_id", "kind", "actor", "summary", "subject", "data", "created_at"}, events[:5])
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "company_documents",
		[]string{"company_id", "document_type", "title", "content", "visibility", "size_bytes", "revision", "updated_by", "created_at", "updated_at"}, docs[:5])
	taskCols := []string{"id", "company_id", "title", "description", "status", "priority", "created_by", "due_at", "last_run_id", "failure_reason", "created_at", "updated_at"}
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "company_tasks", taskCols, tasks[:5])
	check("a few rows of each")
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "activity_events", []string{"id", "company_id", "kind", "actor", "summary", "subject", "data", "created_at"}, events[5:])
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "company_documents",
		[]string{"company_id", "document_type", "title", "content", "visibility", "size_bytes", "revision", "updated_by", "created_at", "updated_at"}, docs[5:])
	testenv.BulkInsert(t, e.SQL, e.Placeholder, "company_tasks", taskCols, tasks[5:])
	check("more rows than each list shows")
	got, err := st.DashboardLists(context.Background(), sc, companies.DashboardActivity, companies.DashboardDocuments, companies.DashboardOpenTasks)
	require.NoError(t, err)
	assert.Len(t, got.Activity, companies.DashboardActivity)
	assert.Len(t, got.Documents, companies.DashboardDocuments)
	assert.True(t, got.DocumentsMore)
	assert.Len(t, got.OpenTasks, companies.DashboardOpenTasks)
}

// ownCompany signs a user up and creates a company of theirs: the user's
// context, the company and the worker's scope of it.
func ownCompany(t *testing.T, e *servicetest.Env, email, name string) (context.Context, models.Company, store.CompanyScope) {
	t.Helper()
	ctx, cong := e.User(t, email)
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: name})
	require.NoError(t, err)
	sc, err := e.Store.SystemCompanyScope(context.Background(), c.ID)
	require.NoError(t, err)
	return ctx, c, sc
}

// The dashboard's analytics section, read with its other figures, is the
// analytics summary's over the default range: this period's and the one
// before, nothing older.
func TestDashboardAnalyticsHeadlineIsTheSummarys(t *testing.T) {
	e := servicetest.New(t)
	ctx, c, _ := ownCompany(t, e, "ada@example.com", "Ada Traffic")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var events []models.AnalyticsEvent
	visit := func(day time.Time, visitor string, pages ...string) {
		for i, path := range pages {
			at := day.Add(10*time.Hour + time.Duration(i)*time.Minute)
			events = append(events, models.AnalyticsEvent{CompanyID: c.ID, Day: models.DayOf(at), At: at, DistinctID: visitor,
				Event: models.PageviewEvent, Path: path})
		}
	}
	visit(today, "v1", "/", "/pricing", "/signup") // this period: 2 visitors, 4 page views, 1 bounce
	visit(today, "v2", "/")
	visit(today.AddDate(0, 0, -35), "v3", "/")       // the period before: 2 visitors, 3 page views
	visit(today.AddDate(0, 0, -40), "v4", "/", "/a") //
	visit(today.AddDate(0, 0, -70), "v5", "/")       // older than both: not counted
	require.NoError(t, e.Store.Analytics().RecordAnalyticsEvents(context.Background(), events))

	d, err := e.Svc.Dashboard(ctx, c.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Analytics)
	sum, err := e.Svc.Analytics.Summary(ctx, c.ID, "")
	require.NoError(t, err)
	h := *d.Analytics
	assert.Equal(t, sum.Range, h.Range)
	assert.Equal(t, sum.Visitors, h.Visitors)
	assert.Equal(t, sum.Pageviews, h.Pageviews)
	assert.Equal(t, sum.Sessions, h.Sessions)
	assert.Equal(t, sum.BounceRate, h.BounceRate)
	assert.Equal(t, [2]float64{2, 2}, [2]float64{h.Visitors.Value, h.Visitors.Previous})
	assert.Equal(t, [2]float64{4, 3}, [2]float64{h.Pageviews.Value, h.Pageviews.Previous})
	assert.Equal(t, 50.0, h.BounceRate.Value, "one of this period's two sessions is a bounce")

	// Another company's traffic is not this one's.
	ctx2, c2, _ := ownCompany(t, e, "bob@example.com", "Bob Quiet")
	d2, err := e.Svc.Dashboard(ctx2, c2.ID)
	require.NoError(t, err)
	require.NotNil(t, d2.Analytics)
	assert.Zero(t, d2.Analytics.Visitors.Value+d2.Analytics.Visitors.Previous+d2.Analytics.Pageviews.Value)

	// A page view captured just now (acknowledged, still in the inbox) is
	// in the next dashboard.
	key, err := e.Svc.Analytics.Key(ctx2, c2.ID)
	require.NoError(t, err)
	res, err := e.Svc.Analytics.Capture(context.Background(), analytics.CaptureInput{
		Body: []byte(`{"api_key":"` + key + `","event":"$pageview","distinct_id":"fresh","properties":{"$current_url":"https://bob.example/"}}`)})
	require.NoError(t, err)
	require.Equal(t, 1, res.Accepted)
	d2, err = e.Svc.Dashboard(ctx2, c2.ID)
	require.NoError(t, err)
	assert.Equal(t, 1.0, d2.Analytics.Pageviews.Value)
}
