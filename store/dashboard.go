package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"

	"holdco/models"
)

// AccountCredits is the credit state of a company's account as its pages
// show it.
type AccountCredits struct {
	Balance        int64
	SpentToday     int64
	DailyCreditCap *int64
}

// CompanyAccountCredits reads the balance, today's spend (the UTC day
// starting at dayStart) and the daily cap of the account that owns the
// scope's company, in one query.
func (s Companies) CompanyAccountCredits(ctx context.Context, c CompanyScope, dayStart time.Time) (AccountCredits, error) {
	if err := c.check("company account credits"); err != nil {
		return AccountCredits{}, err
	}
	var row struct {
		DailyCreditCap *int64
		Balance        *int64
		SpentDay       *time.Time
		SpentToday     *int64
	}
	err := s.db.WithContext(ctx).Table("conglomerates AS g").
		Select("g.daily_credit_cap, a.balance, a.spent_day, a.spent_today").
		Joins("LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id").
		Where("g.id = ?", c.conglomerateID).Take(&row).Error
	if err != nil {
		return AccountCredits{}, wrap("company account credits", err)
	}
	out := AccountCredits{DailyCreditCap: row.DailyCreditCap}
	if row.Balance != nil {
		acct := models.CreditAccount{Balance: *row.Balance}
		if row.SpentDay != nil && row.SpentToday != nil {
			acct.SpentDay, acct.SpentToday = *row.SpentDay, *row.SpentToday
		}
		out.Balance, out.SpentToday = acct.Balance, spentOn(acct, dayStart)
	}
	return out, nil
}

// HeadlineDays are the days the analytics headline sums (models.DayOf
// days): the current period From..To and the one before, PrevFrom up to
// the day before From.
type HeadlineDays struct {
	PrevFrom, From, To string
}

// CompanySummary is the dashboard's one-row part of one company: the
// account's credits, the file usage, the inbox counts, the revenue, the
// attached domain, the ad campaign, the provisioning resources, the
// milestones, the headline of the newest turn and the analytics
// headline's sums.
type CompanySummary struct {
	Credits   AccountCredits
	FileCount int64
	FileBytes int64
	Inbox     models.InboxCounts
	Revenue   models.Revenue
	Domain    *models.DomainPurchase // nil: none attached
	Ads       *models.AdCampaign     // nil: no campaign
	// Resources are the company's resource rows (at most one per
	// models.ResourceKinds, in that order; a kind without a row is
	// absent), as ListResources reads them.
	Resources []models.CompanyResource
	// Milestones are the reached ones in the order ListMilestones gives
	// (reached_at, kind).
	Milestones []models.Milestone
	// LastTurn is the headline of the newest turn (LatestTurn's, all
	// statuses): its id, company, trigger, status, question, cost and
	// times; the message, the text and the answer are not read. nil
	// before the first turn.
	LastTurn *models.Turn
	// AnalyticsCur and AnalyticsPrev are the daily rollups' sums of
	// visitors, page views, sessions and bounces over the headline's
	// current period and the one before (zero: no traffic).
	AnalyticsCur, AnalyticsPrev models.AnalyticsDaily
}

// CompanySummary reads the summary in one statement: the conglomerate's
// cap and account, the company's company_summaries row (its file usage,
// inbox counts, revenue, domain, campaign, newest turn, resources and
// milestones, kept by migration 0039's triggers; docs/architecture.md)
// and one aggregate over its daily analytics rollups over the headline's
// days. It is scanned with database/sql directly (no reflection per
// column). Inside a transaction on Postgres the row does not show the
// transaction's own writes yet (its triggers run at the commit).
func (s Companies) CompanySummary(ctx context.Context, c CompanyScope, dayStart time.Time, headline HeadlineDays) (CompanySummary, error) {
	if err := c.check("company summary"); err != nil {
		return CompanySummary{}, err
	}
	rows, err := rows(ctx, s.db, companySummarySQL, companySummaryArgs(c.conglomerateID, c.id, headline)...)
	if err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	var r summaryRow
	if err := closeRows(rows, r.scan(rows)); err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	return r.summary(c, dayStart), nil
}

// AuthorizeCompanySummary is AuthorizeCompany (an archived company is not
// found) and CompanySummary in one statement: the company's row is read
// with the summary, its conglomerate's account through the row's
// conglomerate. The ownership rule is AuthorizeCompany's, applied to that
// row before anything is returned (with the membership read, as there,
// when the actor's credential did not prove it): the dashboard's
// authorization and its one-row part in one round trip instead of two.
func (s Companies) AuthorizeCompanySummary(ctx context.Context, actor Actor, companyID string, dayStart time.Time, headline HeadlineDays) (CompanyScope, models.Company, CompanySummary, error) {
	rows, err := rows(ctx, s.db, authorizedSummarySQL, companySummaryArgs("", companyID, headline)...)
	if err != nil {
		return CompanyScope{}, models.Company{}, CompanySummary{}, wrap("company summary", err)
	}
	sc := authorizedScans.Get().(*authorizedScan)
	defer authorizedScans.Put(sc)
	if err := closeRows(rows, sc.r.scanInto(rows, sc.dest)); err != nil {
		return CompanyScope{}, models.Company{}, CompanySummary{}, wrap("company summary", err)
	}
	scope, err := authorizeCompanyRow(ctx, s.store(), actor, sc.c, false)
	if err != nil {
		return CompanyScope{}, models.Company{}, CompanySummary{}, err
	}
	return scope, sc.c, sc.r.summary(scope, dayStart), nil
}

// authorizedScan is authorizedSummarySQL's row as scanned: the company's
// columns and the summary's, with the destinations of both, reused from
// a pool (the destinations alone were about 3 KB a dashboard). Every
// column is scanned into its destination on every use; what one use
// leaves is overwritten by the next, never read.
type authorizedScan struct {
	c    models.Company
	r    summaryRow
	dest []any
}

var authorizedScans = sync.Pool{New: func() any {
	sc := new(authorizedScan)
	sc.dest = sc.r.dest(companyDest(&sc.c)...)
	return sc
}}

// AuthorizeCompanyDashboard is AuthorizeCompanySummary and DashboardLists
// (at most activity events, documents and open tasks) for the dashboard.
// On Postgres both statements go in one round trip (pipeline): the lists
// are read with the company's row, before its authorization, and dropped
// when the ownership rule refuses; nothing of them is returned then.
// Elsewhere (SQLite, a transaction) they run one after the other.
func (s Companies) AuthorizeCompanyDashboard(ctx context.Context, actor Actor, companyID string, dayStart time.Time, headline HeadlineDays,
	activity, documents, tasks int) (CompanyScope, models.Company, CompanySummary, DashboardLists, error) {
	if s.dialect != DialectPostgres || s.inTx {
		scope, c, sum, err := s.AuthorizeCompanySummary(ctx, actor, companyID, dayStart, headline)
		if err != nil {
			return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, err
		}
		lists, err := s.DashboardLists(ctx, scope, activity, documents, tasks)
		if err != nil {
			return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, err
		}
		return scope, c, sum, lists, nil
	}
	var (
		lists    DashboardLists
		sumErr   error
		listsErr error
	)
	sc := authorizedScans.Get().(*authorizedScan)
	defer authorizedScans.Put(sc)
	err := pipeline(ctx, s.store(),
		pipelined{q: authorizedSummarySQL, args: companySummaryArgs("", companyID, headline), read: func(rows rowSource) error {
			sumErr = sc.r.scanInto(rows, sc.dest)
			return sumErr
		}},
		pipelined{q: dashboardListsSQL(activity, documents+1, tasks), args: dashboardListsArgs(companyID), read: func(rows rowSource) error {
			lists, listsErr = scanLists(rows, companyID, activity, documents, tasks)
			return listsErr
		}})
	switch {
	case sumErr != nil:
		return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, wrap("company summary", sumErr)
	case listsErr != nil:
		return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, wrap("dashboard lists", listsErr)
	case err != nil:
		return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, wrap("company dashboard", err)
	}
	scope, err := authorizeCompanyRow(ctx, s.store(), actor, sc.c, false)
	if err != nil {
		return CompanyScope{}, models.Company{}, CompanySummary{}, DashboardLists{}, err
	}
	return scope, sc.c, sc.r.summary(scope, dayStart), lists, nil
}

// summaryRow is the summary statement's row as scanned. The nullable
// columns are pgtype.Text, pgtype.Int8 and anyTime: sql.Scanners for
// database/sql, and pgx's direct scan targets on a pipeline (a **string
// or **int64 allocated a pointer per value). The company's own figures
// come from its company_summaries row (summarised says it was there).
type summaryRow struct {
	dailyCreditCap, balance, spentToday                      pgtype.Int8
	spentDay                                                 anyTime
	summarised                                               pgtype.Text
	fileCount, fileBytes                                     pgtype.Int8
	total, unread, received, sent, gross, refunded, payments pgtype.Int8
	domainID, domain, domainState, adState                   pgtype.Text
	dailyCap, totalSpent, totalClicks, creativeVersion       pgtype.Int8
	turnID, turnTrigger, turnStatus, turnQuestion            pgtype.Text
	turnCost                                                 pgtype.Int8
	turnStarted, turnEnded, turnCreated, turnUpdated         anyTime
	cur, prev                                                models.AnalyticsDaily
	res                                                      []resourceCols  // one per models.ResourceKinds
	ms                                                       []milestoneCols // one per models.MilestoneKinds
}

type resourceCols struct {
	status, ref, lastError pgtype.Text
	attempts               pgtype.Int8
	updatedAt              anyTime
}

type milestoneCols struct{ reachedAt, seenAt anyTime }

// rowSource is a statement's rows: database/sql's or pgx's.
type rowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// closeRows closes database/sql rows read by read, giving read's error
// or else the close's.
func closeRows(rows *sql.Rows, err error) error {
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// dest is the statement's destinations: prefix (the columns before the
// summary's), then r's.
func (r *summaryRow) dest(prefix ...any) []any {
	// 39 columns, then five a resource kind and two a milestone kind.
	dest := make([]any, 0, len(prefix)+39+5*len(models.ResourceKinds)+2*len(models.MilestoneKinds))
	dest = append(dest, prefix...)
	dest = append(dest, &r.dailyCreditCap, &r.balance, &r.spentDay, &r.spentToday, &r.summarised, &r.fileCount, &r.fileBytes,
		&r.total, &r.unread, &r.received, &r.sent, &r.gross, &r.refunded, &r.payments,
		&r.domainID, &r.domain, &r.domainState, &r.adState, &r.dailyCap, &r.totalSpent, &r.totalClicks, &r.creativeVersion,
		&r.turnID, &r.turnTrigger, &r.turnStatus, &r.turnQuestion, &r.turnCost, &r.turnStarted, &r.turnEnded, &r.turnCreated, &r.turnUpdated,
		&r.cur.Visitors, &r.cur.Pageviews, &r.cur.Sessions, &r.cur.Bounces, &r.prev.Visitors, &r.prev.Pageviews, &r.prev.Sessions, &r.prev.Bounces)
	r.res, r.ms = make([]resourceCols, len(models.ResourceKinds)), make([]milestoneCols, len(models.MilestoneKinds))
	for i := range r.res {
		dest = append(dest, &r.res[i].status, &r.res[i].ref, &r.res[i].lastError, &r.res[i].attempts, &r.res[i].updatedAt)
	}
	for i := range r.ms {
		dest = append(dest, &r.ms[i].reachedAt, &r.ms[i].seenAt)
	}
	return dest
}

// scan reads the statement's one row into prefix (the columns before the
// summary's, if any) and r; no row is models.ErrNotFound.
func (r *summaryRow) scan(rows rowSource, prefix ...any) error {
	return r.scanInto(rows, r.dest(prefix...))
}

// scanInto is scan with r.dest's destinations made already.
func (r *summaryRow) scanInto(rows rowSource, dest []any) error {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return models.ErrNotFound
	}
	if err := scanRow(rows, dest...); err != nil {
		return err
	}
	if !r.summarised.Valid {
		// Every company's row is made with it (migration 0039's trigger):
		// a missing one is a broken schema, not a company without data.
		return errors.New("store: the company has no company_summaries row")
	}
	return nil
}

// summary is the row's CompanySummary for the company c.
func (r *summaryRow) summary(c CompanyScope, dayStart time.Time) CompanySummary {
	out := CompanySummary{Credits: AccountCredits{DailyCreditCap: int64Ptr(r.dailyCreditCap)},
		Inbox:      models.InboxCounts{Total: r.total.Int64, Unread: r.unread.Int64, Received: r.received.Int64, Sent: r.sent.Int64},
		Revenue:    models.NewRevenue(r.gross.Int64, r.refunded.Int64, 0, r.payments.Int64),
		Resources:  make([]models.CompanyResource, 0, len(models.ResourceKinds)),
		Milestones: []models.Milestone{}, AnalyticsCur: r.cur, AnalyticsPrev: r.prev}
	out.AnalyticsCur.CompanyID, out.AnalyticsPrev.CompanyID = c.id, c.id
	if r.balance.Valid {
		acct := models.CreditAccount{Balance: r.balance.Int64}
		if r.spentDay.valid && r.spentToday.Valid {
			acct.SpentDay, acct.SpentToday = r.spentDay.t, r.spentToday.Int64
		}
		out.Credits.Balance, out.Credits.SpentToday = acct.Balance, spentOn(acct, dayStart)
	}
	out.FileCount, out.FileBytes = r.fileCount.Int64, r.fileBytes.Int64
	if r.domainID.Valid {
		id := c.id
		out.Domain = &models.DomainPurchase{ID: r.domainID.String, Domain: r.domain.String, State: models.DomainState(r.domainState.String), AttachedCompanyID: &id}
	}
	if r.adState.Valid {
		out.Ads = &models.AdCampaign{CompanyID: c.id, ConglomerateID: c.conglomerateID, DailyCap: r.dailyCap.Int64, State: models.AdState(r.adState.String),
			TotalSpent: r.totalSpent.Int64, TotalClicks: r.totalClicks.Int64, CreativeVersion: r.creativeVersion.Int64}
	}
	if r.turnID.Valid {
		out.LastTurn = &models.Turn{ID: r.turnID.String, CompanyID: c.id, ConglomerateID: c.conglomerateID, Trigger: models.TurnTrigger(r.turnTrigger.String),
			Status: models.TurnStatus(r.turnStatus.String), Question: r.turnQuestion.String, CreditsCost: int64Ptr(r.turnCost), StartedAt: r.turnStarted.ptr(),
			EndedAt: r.turnEnded.ptr(), CreatedAt: r.turnCreated.t, UpdatedAt: r.turnUpdated.t}
	}
	for i, kind := range models.ResourceKinds {
		rc := r.res[i]
		if !rc.status.Valid {
			continue
		}
		out.Resources = append(out.Resources, models.CompanyResource{CompanyID: c.id, Kind: kind, Status: models.ResourceStatus(rc.status.String),
			Ref: rc.ref.String, LastError: rc.lastError.String, Attempts: int(rc.attempts.Int64), UpdatedAt: rc.updatedAt.t})
	}
	for i, kind := range models.MilestoneKinds {
		if r.ms[i].reachedAt.valid {
			out.Milestones = append(out.Milestones, models.Milestone{CompanyID: c.id, Kind: kind, ReachedAt: r.ms[i].reachedAt.t, SeenAt: r.ms[i].seenAt.ptr()})
		}
	}
	// ListMilestones's order.
	slices.SortStableFunc(out.Milestones, func(a, b models.Milestone) int {
		if n := a.ReachedAt.Compare(b.ReachedAt); n != 0 {
			return n
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	return out
}

// companySummarySQL is CompanySummary's statement and
// authorizedSummarySQL AuthorizeCompanySummary's (the company's columns
// first, the account through the company's conglomerate); their arguments
// are companySummaryArgs's. The same text on both databases: the
// company's row, its conglomerate's cap and account (each a primary key
// or unique lookup), its company_summaries row (a primary key lookup: the
// file usage, inbox, revenue, domain, ad campaign, newest turn, resources
// and milestones, kept by migration 0039's triggers) and the analytics
// headline's sums over its daily rollups (the days are the request's, so
// they stay an aggregate). Before the summary row the statement joined or
// aggregated twelve relations; on Postgres the generic plan's executor
// start-up (a node per join, each projecting the wide row built so far)
// was most of the backend's time (docs/benchmarks.md).
var (
	companySummarySQL    = newFixedSQL(companySummaryText(false))
	authorizedSummarySQL = newFixedSQL(companySummaryText(true))
)

// summaryColumns are the company_summaries columns the statement reads,
// in summaryRow.scan's order (the resources' and milestones' after the
// analytics sums, one group per kind of models.ResourceKinds and
// models.MilestoneKinds).
func summaryColumns() (head, tail []string) {
	head = []string{"company_id", "file_count", "file_bytes", "emails_total", "emails_unread", "emails_received", "emails_sent",
		"revenue_gross", "revenue_refunded", "revenue_payments", "domain_id", "domain", "domain_state",
		"ad_state", "ad_daily_cap", "ad_total_spent", "ad_total_clicks", "ad_creative_version",
		"turn_id", "turn_trigger", "turn_status", "turn_question", "turn_credits_cost", "turn_started_at", "turn_ended_at",
		"turn_created_at", "turn_updated_at"}
	for _, kind := range models.ResourceKinds {
		if !plainWord(string(kind)) {
			panic(fmt.Sprintf("store: resource kind %q is not a plain word", kind))
		}
		p := "resource_" + string(kind) + "_"
		tail = append(tail, p+"status", p+"ref", p+"last_error", p+"attempts", p+"updated_at")
	}
	for _, kind := range models.MilestoneKinds {
		if !plainWord(string(kind)) {
			panic(fmt.Sprintf("store: milestone kind %q is not a plain word", kind))
		}
		tail = append(tail, "milestone_"+string(kind)+"_reached_at", "milestone_"+string(kind)+"_seen_at")
	}
	return head, tail
}

func companySummaryText(withCompany bool) string {
	company, conglomerate := "", "?"
	if withCompany {
		company, conglomerate = "c."+strings.Join(companyColumns, ", c.")+",\n\t\t", "c.conglomerate_id"
	}
	head, tail := summaryColumns()
	return `SELECT ` + company + `g.daily_credit_cap, a.balance, a.spent_day, a.spent_today,
		s.` + strings.Join(head, ", s.") + `,
		h.cur_visitors, h.cur_pageviews, h.cur_sessions, h.cur_bounces, h.prev_visitors, h.prev_pageviews, h.prev_sessions, h.prev_bounces,
		s.` + strings.Join(tail, ", s.") + `
		FROM companies c
		LEFT JOIN conglomerates g ON g.id = ` + conglomerate + `
		LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id
		LEFT JOIN company_summaries s ON s.company_id = c.id
		CROSS JOIN (SELECT ` + headlineSums + `
			FROM analytics_daily WHERE company_id = ? AND day >= ? AND day <= ?) h
		WHERE c.id = ?`
}

// plainWord is whether s is lower-case letters and underscores only (safe
// to write into a statement as a name).
func plainWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return s != ""
}

// headlineSums are the analytics headline's sums over the daily rollups
// of its two periods (the current one from the first argument on). Postgres
// sums bigints as numeric: the cast answers them as bigint, which pgx scans
// without a big.Int per value.
var headlineSums = func() string {
	var b strings.Builder
	for i, col := range []string{"visitors", "pageviews", "sessions", "bounces"} {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "CAST(COALESCE(SUM(CASE WHEN day >= ? THEN %s ELSE 0 END), 0) AS BIGINT) AS cur_%s, CAST(COALESCE(SUM(CASE WHEN day < ? THEN %s ELSE 0 END), 0) AS BIGINT) AS prev_%s",
			col, col, col, col)
	}
	return b.String()
}()

// companySummaryArgs are the arguments of companySummarySQL (for the
// company's conglomerate) or, without one, of authorizedSummarySQL, for
// the company and the headline's days.
func companySummaryArgs(conglomerateID, companyID string, h HeadlineDays) []any {
	// Each value boxed once (a string put in an interface is a copy of
	// its header on the heap), then repeated.
	args := make([]any, 0, 13)
	if conglomerateID != "" {
		args = append(args, conglomerateID)
	}
	from, company := any(h.From), any(companyID)
	for range 8 {
		args = append(args, from)
	}
	return append(args, company, h.PrevFrom, h.To, company)
}

// fixedSQL is a statement whose text never changes, written with ?
// placeholders and rendered once for each dialect. GORM's Raw rewrites a
// statement byte by byte on every call (clause.Expr.Build, a quarter of
// the dashboard's CPU for its long statements); rows hands the rendered
// text to GORM as it is, through the same callbacks (the statement count,
// the slow-statement log, tracing).
type fixedSQL struct {
	sqlite, postgres string
}

func newFixedSQL(q string) fixedSQL {
	return fixedSQL{sqlite: q, postgres: numberedPlaceholders(q)}
}

// rows runs a fixedSQL with its arguments (one per placeholder, plain
// values: no slice is expanded).
func rows(ctx context.Context, db *gorm.DB, q fixedSQL, args ...any) (*sql.Rows, error) {
	tx := db.WithContext(ctx).Raw("")
	text := q.sqlite
	if tx.Dialector.Name() == "postgres" {
		text = q.postgres
	}
	tx.Statement.SQL.WriteString(text)
	tx.Statement.Vars = append(tx.Statement.Vars, args...)
	return tx.Rows()
}

// DashboardLists are the dashboard's three bounded lists.
type DashboardLists struct {
	// Activity is ListActivity's first page (newest first).
	Activity []models.ActivityEvent
	// Documents are RecentDocuments's (the most recently updated visible
	// documents, without content) and DocumentsMore whether there are
	// more than the limit.
	Documents     []models.DocumentSummary
	DocumentsMore bool
	// OpenTasks are OpenTasks's (newest first).
	OpenTasks []models.Task
}

// DashboardLists reads the scope's company's newest activity events (at
// most activity, as ListActivity with no cursor), its most recently
// updated visible documents (at most documents, as RecentDocuments) and
// its open tasks (at most tasks, as OpenTasks) in one statement: a UNION
// ALL of the three bounded reads, each through its index, one row shape
// for all three (a part number, eight text, two integer and three time
// columns), scanned with database/sql directly. On Postgres that is one
// round trip instead of three.
func (s Companies) DashboardLists(ctx context.Context, c CompanyScope, activity, documents, tasks int) (DashboardLists, error) {
	if err := c.check("dashboard lists"); err != nil {
		return DashboardLists{}, err
	}
	rows, err := rows(ctx, s.db, dashboardListsSQL(activity, documents+1, tasks), dashboardListsArgs(c.id)...)
	if err != nil {
		return DashboardLists{}, wrap("dashboard lists", err)
	}
	out, err := scanLists(rows, c.id, activity, documents, tasks)
	if err := closeRows(rows, err); err != nil {
		return DashboardLists{}, wrap("dashboard lists", err)
	}
	return out, nil
}

// dashboardListsArgs are dashboardListsSQL's arguments for the company.
func dashboardListsArgs(companyID string) []any {
	company := any(companyID)
	return []any{company, company, visibleArg, company}
}

// visibleArg is the lists' constant argument, boxed once.
var visibleArg any = string(models.DocumentVisible)

// openTaskStatuses is models.OpenTaskStatuses as an SQL list, written into
// the statements that read open tasks rather than bound: a partial index's
// condition (migration 0040's) is matched against the statement's text, so
// an index over the open tasks is used only when their statuses are
// written out.
var openTaskStatuses = func() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, st := range models.OpenTaskStatuses {
		if !plainWord(string(st)) {
			panic(fmt.Sprintf("store: task status %q is not a plain word", st))
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + string(st) + "'")
	}
	b.WriteByte(')')
	return b.String()
}()

// scanLists reads dashboardListsSQL's rows for the company (documents:
// the documents list's limit, one row more was read) and puts each list
// in its order.
func scanLists(rows rowSource, companyID string, activity, documents, tasks int) (DashboardLists, error) {
	// Each list is sized for its limit at its first row (documents: one
	// more was read), so appending never copies and an empty list
	// allocates nothing; the destinations are one slice for every row (a
	// variadic call with fresh pointers allocated one per row).
	// pgtype.Text and pgtype.Int8 are sql.Scanners with database/sql, and
	// scanRow decodes them from pgx's raw values on a pipeline.
	out := DashboardLists{Activity: []models.ActivityEvent{}, Documents: []models.DocumentSummary{}, OpenTasks: []models.Task{}}
	var l listRow
	dest := l.dest()
	for rows.Next() {
		if err := scanRow(rows, dest...); err != nil {
			return DashboardLists{}, err
		}
		switch l.part {
		case 0:
			if cap(out.Activity) == 0 {
				out.Activity = make([]models.ActivityEvent, 0, listCap(activity))
			}
			out.Activity = append(out.Activity, models.ActivityEvent{ID: l.s1.String, CompanyID: companyID, Kind: models.ActivityKind(l.s2.String),
				Actor: models.ActivityActor(l.s3.String), Summary: l.s4.String, Subject: l.s5.String, Data: l.s6.String, CreatedAt: l.t1.at()})
		case 1:
			if cap(out.Documents) == 0 {
				out.Documents = make([]models.DocumentSummary, 0, listCap(documents+1))
			}
			out.Documents = append(out.Documents, models.DocumentSummary{DocumentType: l.s1.String, Title: l.s2.String,
				Visibility: models.DocumentVisibility(l.s3.String), UpdatedBy: models.ActivityActor(l.s4.String), SizeBytes: l.n1.Int64,
				Revision: l.n2.Int64, UpdatedAt: l.t1.at()})
		case 2:
			t := models.Task{ID: l.s1.String, CompanyID: companyID, Title: l.s2.String, Description: l.s3.String, Status: models.TaskStatus(l.s4.String),
				Priority: models.TaskPriority(l.s5.String), CreatedBy: models.ActivityActor(l.s6.String), FailureReason: l.s8.String,
				CreatedAt: l.t1.at(), UpdatedAt: l.t2.at()}
			if l.s7.Valid {
				id := l.s7.String
				t.LastRunID = &id
			}
			if l.t3.valid {
				due := l.t3.t
				t.DueAt = &due
			}
			if cap(out.OpenTasks) == 0 {
				out.OpenTasks = make([]models.Task, 0, listCap(tasks))
			}
			out.OpenTasks = append(out.OpenTasks, t)
		}
	}
	if err := rows.Err(); err != nil {
		return DashboardLists{}, err
	}
	// Each list in its own order (the statement's branches are not
	// ordered among themselves: an outer ORDER BY made SQLite sort in a
	// sorter whose memory it mapped and unmapped on every read, a third
	// of the statement's time).
	slices.SortStableFunc(out.Activity, func(a, b models.ActivityEvent) int {
		return newestFirst(a.CreatedAt, b.CreatedAt, a.ID, b.ID)
	})
	slices.SortStableFunc(out.Documents, func(a, b models.DocumentSummary) int {
		return newestFirst(a.UpdatedAt, b.UpdatedAt, a.DocumentType, b.DocumentType)
	})
	slices.SortStableFunc(out.OpenTasks, func(a, b models.Task) int {
		return newestFirst(a.CreatedAt, b.CreatedAt, a.ID, b.ID)
	})
	if len(out.Documents) > documents {
		out.Documents, out.DocumentsMore = out.Documents[:documents], true
	}
	return out, nil
}

// listRow is a row of dashboardListsSQL as scanned.
type listRow struct {
	part                           int
	s1, s2, s3, s4, s5, s6, s7, s8 pgtype.Text
	n1, n2                         pgtype.Int8
	t1, t2, t3                     anyTime
}

// dest is the row's destinations in the statement's column order.
func (l *listRow) dest() []any {
	return []any{&l.part, &l.s1, &l.s2, &l.s3, &l.s4, &l.s5, &l.s6, &l.s7, &l.s8, &l.n1, &l.n2, &l.t1, &l.t2, &l.t3}
}

// listCap is the capacity a list of at most limit rows starts with
// (bounded: a large limit is not allocated before its rows come).
func listCap(limit int) int { return min(max(limit, 0), 64) }

// newestFirst orders by time, then key, both descending.
func newestFirst(at, bt time.Time, ak, bk string) int {
	if n := bt.Compare(at); n != 0 {
		return n
	}
	return strings.Compare(bk, ak)
}

// dashboardListsSQL is DashboardLists's statement. Each branch is a
// subquery so that it keeps its own ORDER BY and LIMIT (RecentDocuments's
// limit+1 tells whether there are more); the NULLs are typed for
// Postgres's UNION. The rows come in no particular order: DashboardLists
// puts each list in its own (t1 is the activity's and the tasks'
// created_at and the documents' updated_at, s1 the activity's and the
// tasks' id and the documents' type).
// The limits are written into the text (one rendering per set of limits,
// kept): SQLite re-prepares a statement whose LIMIT is a bound parameter
// on every call (sqlite3Reprepare was 58 % of this read's time).
func dashboardListsSQL(activity, documents, tasks int) fixedSQL {
	key := [3]int{activity, documents, tasks}
	if q, ok := dashboardListsTexts.Load(key); ok {
		return q.(fixedSQL)
	}
	q := fixedSQL{sqlite: dashboardListsQuery(DialectSQLite, activity, documents, tasks),
		postgres: numberedPlaceholders(dashboardListsQuery(DialectPostgres, activity, documents, tasks))}
	dashboardListsTexts.Store(key, q)
	return q
}

// dashboardListsQuery is the dialect's lists statement with ? placeholders.
func dashboardListsQuery(dialect string, activity, documents, tasks int) string {
	if dialect == DialectPostgres {
		return fmt.Sprintf(dashboardListsPostgres, activity, documents, tasks)
	}
	return fmt.Sprintf(dashboardListsSQLite, activity, documents, tasks)
}

var dashboardListsTexts sync.Map // [3]int → fixedSQL

// dashboardListsSQLite is the lists statement's text on SQLite, with the
// limits to fill in (dashboardListsPostgres, the same rows, on Postgres).
var dashboardListsSQLite = `SELECT part, s1, s2, s3, s4, s5, s6, s7, s8, n1, n2, t1, t2, t3 FROM (
	SELECT * FROM (SELECT 0 AS part, id AS s1, kind AS s2, actor AS s3, summary AS s4, subject AS s5, data AS s6,
		CAST(NULL AS TEXT) AS s7, CAST(NULL AS TEXT) AS s8, CAST(NULL AS BIGINT) AS n1, CAST(NULL AS BIGINT) AS n2,
		created_at AS t1, CAST(NULL AS TIMESTAMPTZ) AS t2, CAST(NULL AS TIMESTAMPTZ) AS t3
		FROM activity_events WHERE company_id = ? ORDER BY created_at DESC, id DESC LIMIT %d) a
	UNION ALL
	SELECT * FROM (SELECT 1, document_type, title, visibility, updated_by, CAST(NULL AS TEXT), CAST(NULL AS TEXT),
		CAST(NULL AS TEXT), CAST(NULL AS TEXT), size_bytes, revision, updated_at, CAST(NULL AS TIMESTAMPTZ), CAST(NULL AS TIMESTAMPTZ)
		FROM company_documents WHERE company_id = ? AND visibility = ? ORDER BY updated_at DESC LIMIT %d) d
	UNION ALL
	SELECT * FROM (SELECT 2, id, title, description, status, priority, created_by, last_run_id, failure_reason,
		CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), created_at, updated_at, due_at
		FROM company_tasks WHERE company_id = ? AND status IN ` + openTaskStatuses + ` ORDER BY created_at DESC, id DESC LIMIT %d) t
) l`

// dashboardListsPostgres is dashboardListsSQLite for Postgres: the same
// rows, with every column of every branch of the union's own type (text,
// bigint), so that no branch needs a projection of its own on top of its
// read (a Subquery Scan, whose start-up was about a tenth of Postgres's
// time a dashboard), and each branch ordered by its output columns. SQLite
// would sort a branch ordered by a cast (it does not see the index's
// order through it): TestDashboardListsSortNothing reads both plans.
var dashboardListsPostgres = `SELECT part, s1, s2, s3, s4, s5, s6, s7, s8, n1, n2, t1, t2, t3 FROM (
	SELECT * FROM (SELECT 0 AS part, CAST(id AS TEXT) AS s1, CAST(kind AS TEXT) AS s2, CAST(actor AS TEXT) AS s3, CAST(summary AS TEXT) AS s4,
		CAST(subject AS TEXT) AS s5, CAST(data AS TEXT) AS s6, CAST(NULL AS TEXT) AS s7, CAST(NULL AS TEXT) AS s8, CAST(NULL AS BIGINT) AS n1,
		CAST(NULL AS BIGINT) AS n2, created_at AS t1, CAST(NULL AS TIMESTAMPTZ) AS t2, CAST(NULL AS TIMESTAMPTZ) AS t3
		FROM activity_events WHERE company_id = ? ORDER BY t1 DESC, s1 DESC LIMIT %d) a
	UNION ALL
	SELECT * FROM (SELECT 1, CAST(document_type AS TEXT), CAST(title AS TEXT), CAST(visibility AS TEXT), CAST(updated_by AS TEXT), CAST(NULL AS TEXT),
		CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(size_bytes AS BIGINT), CAST(revision AS BIGINT), updated_at,
		CAST(NULL AS TIMESTAMPTZ), CAST(NULL AS TIMESTAMPTZ)
		FROM company_documents WHERE company_id = ? AND visibility = ? ORDER BY 12 DESC LIMIT %d) d
	UNION ALL
	SELECT * FROM (SELECT 2, CAST(id AS TEXT), CAST(title AS TEXT), CAST(description AS TEXT), CAST(status AS TEXT), CAST(priority AS TEXT),
		CAST(created_by AS TEXT), CAST(last_run_id AS TEXT), CAST(failure_reason AS TEXT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), created_at,
		updated_at, due_at
		FROM company_tasks WHERE company_id = ? AND status IN ` + openTaskStatuses + ` ORDER BY 12 DESC, 2 DESC LIMIT %d) t
) l`

// anyTime scans a time column of a compound statement: Postgres and a
// SQLite column with a declared time type give a time.Time; SQLite gives
// the stored text where a UNION's column takes its declared type from
// another branch (the driver's formats, read in UTC as the driver does).
type anyTime struct {
	t     time.Time
	valid bool
}

func (a anyTime) at() time.Time { return a.t }

// int64Ptr is v's value, nil for NULL.
func int64Ptr(v pgtype.Int8) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

// ptr is the time, nil for NULL.
func (a anyTime) ptr() *time.Time {
	if !a.valid {
		return nil
	}
	t := a.t
	return &t
}

// sqliteTimeFormats are the SQLite driver's time formats (the store
// writes the first).
var sqliteTimeFormats = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ScanTimestamptz is pgx's direct scan of a timestamptz (no
// driver.Value in between).
func (a *anyTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*a = anyTime{}
		return nil
	}
	if v.InfinityModifier != pgtype.Finite {
		return fmt.Errorf("store: an infinite time (%v)", v.InfinityModifier)
	}
	*a = anyTime{t: v.Time.UTC(), valid: true}
	return nil
}

func (a *anyTime) Scan(v any) error {
	var s string
	switch v := v.(type) {
	case nil:
		*a = anyTime{}
		return nil
	case time.Time:
		*a = anyTime{t: v.UTC(), valid: true}
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("store: a time column holds %T", v)
	}
	ts, _ := strings.CutSuffix(s, "Z")
	for _, f := range sqliteTimeFormats {
		if t, err := time.ParseInLocation(f, ts, time.UTC); err == nil {
			*a = anyTime{t: t.UTC(), valid: true}
			return nil
		}
	}
	return fmt.Errorf("store: %q is not a time", s)
}
