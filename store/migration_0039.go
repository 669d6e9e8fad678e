package store

import (
	"fmt"
	"strings"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0039CompanySummaries adds company_summaries: one row per
// company holding the dashboard's one-row figures that are the company's
// own — the file usage, the inbox counts, the revenue, the attached
// domain's headline, the ad campaign's headline, the newest turn's
// headline, each provisioning resource and each milestone — so that the
// dashboard reads one row instead of aggregating over seven tables
// (docs/architecture.md, "Company summaries").
//
// The row is kept by triggers on the tables it summarises, defined here
// for both databases, so that no write path (a store method, a migration,
// an operator's statement, a cascade) can forget it: a company's insert
// makes its row; a change of an email or a payment adds its difference to
// the counts and sums; a change of the file usage, the domain, the
// campaign, a resource or a milestone copies the changed row's columns;
// a change of a turn reads the newest turn again. The existing companies
// are summarised from their rows (the same reads). On Postgres the
// triggers but the company's run at the commit (constraint triggers,
// deferred): the summary row is then the last lock a transaction takes,
// so a transaction that locks the company first and writes a summarised
// table after cannot deadlock with one that did the reverse.
//
// The resource and milestone kinds, the revenue's currency and the email
// directions are those of this migration (a snapshot, as every migration's
// structs are): a new kind needs a migration that adds its columns and
// recreates the triggers (TestSummaryCoversEveryKind fails until then).
func migration0039CompanySummaries() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0039_company_summaries",
		Migrate: func(tx *gorm.DB) error {
			postgres := tx.Dialector.Name() == "postgres"
			schema := ""
			if postgres {
				if err := tx.Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
					return err
				}
			}
			for _, stmt := range m0039Statements(postgres, schema) {
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("%w: %s", err, firstLine(stmt))
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			postgres := tx.Dialector.Name() == "postgres"
			for _, t := range m0039Triggers() {
				name := t.name()
				stmt := "DROP TRIGGER IF EXISTS " + name
				if postgres {
					stmt += " ON " + t.table
				}
				if err := tx.Exec(stmt).Error; err != nil {
					return err
				}
				if postgres {
					if err := tx.Exec("DROP FUNCTION IF EXISTS " + name + "()").Error; err != nil {
						return err
					}
				}
			}
			return tx.Exec("DROP TABLE IF EXISTS company_summaries").Error
		},
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

var (
	m0039ResourceKinds  = []string{"repository", "database", "hosting"}
	m0039MilestoneKinds = []string{"first_dollar"}
)

const (
	m0039Currency = "usd"
	m0039Inbound  = "inbound"
	m0039Outbound = "outbound"
)

// m0039Columns are company_summaries's columns after company_id: name and
// kind (n: a count or sum, never NULL; i: a nullable integer; s: text;
// t: a time).
func m0039Columns() [][2]string {
	cols := [][2]string{
		{"file_count", "n"}, {"file_bytes", "n"},
		{"emails_total", "n"}, {"emails_unread", "n"}, {"emails_received", "n"}, {"emails_sent", "n"},
		{"revenue_gross", "n"}, {"revenue_refunded", "n"}, {"revenue_payments", "n"},
		{"domain_id", "s"}, {"domain", "s"}, {"domain_state", "s"},
		{"ad_state", "s"}, {"ad_daily_cap", "i"}, {"ad_total_spent", "i"}, {"ad_total_clicks", "i"}, {"ad_creative_version", "i"},
	}
	for i, c := range m0039TurnColumns {
		kind := "s"
		switch c {
		case "credits_cost":
			kind = "i"
		case "started_at", "ended_at", "created_at", "updated_at":
			kind = "t"
		}
		cols = append(cols, [2]string{m0039TurnSummary[i], kind})
	}
	for _, k := range m0039ResourceKinds {
		cols = append(cols, [2]string{"resource_" + k + "_status", "s"}, [2]string{"resource_" + k + "_ref", "s"},
			[2]string{"resource_" + k + "_last_error", "s"}, [2]string{"resource_" + k + "_attempts", "i"},
			[2]string{"resource_" + k + "_updated_at", "t"})
	}
	for _, k := range m0039MilestoneKinds {
		cols = append(cols, [2]string{"milestone_" + k + "_reached_at", "t"}, [2]string{"milestone_" + k + "_seen_at", "t"})
	}
	return cols
}

// m0039TurnColumns are the turn's headline columns and m0039TurnSummary
// the summary's columns they are kept in.
var (
	m0039TurnColumns = []string{"id", `"trigger"`, "status", "question", "credits_cost", "started_at", "ended_at", "created_at", "updated_at"}
	m0039TurnSummary = []string{"turn_id", "turn_trigger", "turn_status", "turn_question", "turn_credits_cost", "turn_started_at",
		"turn_ended_at", "turn_created_at", "turn_updated_at"}
)

// m0039Trigger is one trigger: after op on table, for each row (when
// when holds), run body; on Postgres at the commit unless immediate. The
// body's statements name the summary table {S} and the turns table {T}
// (qualified by the schema on Postgres: a trigger runs with the search
// path of whoever writes, an operator's or the test pool's). lock, on
// Postgres, is the companies whose summary rows are locked first (FOR
// UPDATE), so that the body's statements, each with a fresh snapshot,
// see every turn committed by a writer that held the row before.
type m0039Trigger struct {
	table, op, when string
	lock            []string
	body            []string
	// immediate: on Postgres too, the trigger runs at the statement, not
	// at the commit (the company's insert, which makes the row).
	immediate bool
}

func (t m0039Trigger) name() string {
	return "company_summaries_" + strings.TrimPrefix(t.table, "company_") + "_" + strings.ToLower(t.op)
}

// m0039Statements are the migration's statements for the dialect:
// the table, the backfill, the triggers.
func m0039Statements(postgres bool, schema string) []string {
	typ := map[string]string{"n": "integer NOT NULL DEFAULT 0", "i": "integer", "s": "text", "t": "datetime"}
	idType := "text"
	if postgres {
		typ = map[string]string{"n": "bigint NOT NULL DEFAULT 0", "i": "bigint", "s": "text", "t": "timestamptz"}
		idType = "varchar(36)"
	}
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE company_summaries (\n\tcompany_id " + idType +
		" NOT NULL PRIMARY KEY REFERENCES companies(id) ON DELETE CASCADE")
	for _, c := range m0039Columns() {
		fmt.Fprintf(&ddl, ",\n\t%s %s", c[0], typ[c[1]])
	}
	ddl.WriteString("\n)")
	stmts := []string{ddl.String()}
	stmts = append(stmts, m0039Backfill()...)

	qualify := func(s string) string {
		s = strings.ReplaceAll(s, "{S}", "company_summaries")
		s = strings.ReplaceAll(s, "{T}", "turns")
		return s
	}
	if postgres {
		q := m0039Qualifier(schema)
		qualify = func(s string) string {
			s = strings.ReplaceAll(s, "{S}", q+"company_summaries")
			s = strings.ReplaceAll(s, "{T}", q+"turns")
			return s
		}
	}
	for _, t := range m0039Triggers() {
		when := ""
		if t.when != "" {
			when = "\n\tWHEN (" + t.when + ")"
		}
		if !postgres {
			stmts = append(stmts, fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW%s BEGIN\n\t%s;\nEND",
				t.name(), t.op, t.table, when, qualify(strings.Join(t.body, ";\n\t"))))
			continue
		}
		constraint, deferred := "CONSTRAINT ", " DEFERRABLE INITIALLY DEFERRED"
		if t.immediate {
			constraint, deferred = "", ""
		}
		var body strings.Builder
		body.WriteString("BEGIN\n")
		if len(t.lock) > 0 {
			fmt.Fprintf(&body, "\tPERFORM 1 FROM {S} WHERE company_id IN (%s) ORDER BY company_id FOR UPDATE;\n", strings.Join(t.lock, ", "))
		}
		for _, s := range t.body {
			body.WriteString("\t" + s + ";\n")
		}
		body.WriteString("\tRETURN NULL;\nEND")
		stmts = append(stmts,
			fmt.Sprintf("CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $body$\n%s\n$body$", t.name(), qualify(body.String())),
			fmt.Sprintf("CREATE %sTRIGGER %s AFTER %s ON %s%s FOR EACH ROW%s EXECUTE FUNCTION %s()",
				constraint, t.name(), t.op, t.table, deferred, when, t.name()))
	}
	return stmts
}

// m0039Backfill summarises the existing companies with the reads the
// summary replaces.
func m0039Backfill() []string {
	stmts := []string{"INSERT INTO company_summaries (company_id) SELECT id FROM companies"}
	set := func(cols []string, query string) {
		stmts = append(stmts, fmt.Sprintf("UPDATE company_summaries SET (%s) = (%s)", strings.Join(cols, ", "), query))
	}
	set([]string{"file_count", "file_bytes"}, `SELECT COALESCE(MAX(file_count), 0), COALESCE(MAX(bytes), 0) FROM company_file_usage u
		WHERE u.company_id = company_summaries.company_id`)
	set([]string{"emails_total", "emails_unread", "emails_received", "emails_sent"}, fmt.Sprintf(`SELECT COUNT(*),
		COALESCE(SUM(CASE WHEN direction = '%[1]s' AND read_at IS NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN direction = '%[1]s' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN direction = '%[2]s' THEN 1 ELSE 0 END), 0)
		FROM company_emails e WHERE e.company_id = company_summaries.company_id`, m0039Inbound, m0039Outbound))
	set([]string{"revenue_gross", "revenue_refunded", "revenue_payments"}, fmt.Sprintf(`SELECT COALESCE(SUM(amount_cents), 0),
		COALESCE(SUM(refunded_cents), 0), COUNT(*)
		FROM company_payments p WHERE p.company_id = company_summaries.company_id AND p.currency = '%s'`, m0039Currency))
	set([]string{"domain_id", "domain", "domain_state"}, `SELECT id, domain, state FROM domain_purchases d
		WHERE d.attached_company_id = company_summaries.company_id`)
	set([]string{"ad_state", "ad_daily_cap", "ad_total_spent", "ad_total_clicks", "ad_creative_version"},
		`SELECT state, daily_cap, total_spent, total_clicks, creative_version FROM ad_campaigns a
		WHERE a.company_id = company_summaries.company_id`)
	set(m0039TurnSummary, m0039NewestTurn("turns", "company_summaries.company_id"))
	for _, k := range m0039ResourceKinds {
		set(m0039ResourceColumns(k), fmt.Sprintf(`SELECT status, ref, last_error, attempts, updated_at FROM company_resources r
		WHERE r.company_id = company_summaries.company_id AND r.kind = '%s'`, k))
	}
	for _, k := range m0039MilestoneKinds {
		set(m0039MilestoneColumns(k), fmt.Sprintf(`SELECT reached_at, seen_at FROM company_milestones m
		WHERE m.company_id = company_summaries.company_id AND m.kind = '%s'`, k))
	}
	return stmts
}

func m0039ResourceColumns(kind string) []string {
	p := "resource_" + kind + "_"
	return []string{p + "status", p + "ref", p + "last_error", p + "attempts", p + "updated_at"}
}

func m0039MilestoneColumns(kind string) []string {
	return []string{"milestone_" + kind + "_reached_at", "milestone_" + kind + "_seen_at"}
}

// m0039NewestTurn is the headline of the company's newest turn (the
// order LatestTurn reads), no row before its first.
func m0039NewestTurn(turns, company string) string {
	return fmt.Sprintf(`SELECT %s FROM %s WHERE company_id = %s ORDER BY created_at DESC, id DESC LIMIT 1`,
		strings.Join(m0039TurnColumns, ", "), turns, company)
}

// m0039Triggers are the summary's triggers.
func m0039Triggers() []m0039Trigger {
	var ts []m0039Trigger
	add := func(t m0039Trigger) { ts = append(ts, t) }
	distinct := func(cols ...string) string {
		conds := make([]string, len(cols))
		for i, c := range cols {
			conds[i] = fmt.Sprintf("OLD.%[1]s IS DISTINCT FROM NEW.%[1]s", c)
		}
		return strings.Join(conds, " OR ")
	}
	moved := func(key string) string { return fmt.Sprintf("OLD.%[1]s IS DISTINCT FROM NEW.%[1]s", key) }

	// A company's row is made with the company (and removed with it: the
	// foreign key cascades).
	add(m0039Trigger{table: "companies", op: "INSERT", immediate: true, body: []string{"INSERT INTO {S} (company_id) VALUES (NEW.id)"}})

	// File usage: a copy of the company's usage row.
	usage := func(r string) string {
		return fmt.Sprintf("UPDATE {S} SET file_count = %[1]s.file_count, file_bytes = %[1]s.bytes WHERE company_id = %[1]s.company_id", r)
	}
	usageGone := "UPDATE {S} SET file_count = 0, file_bytes = 0 WHERE company_id = OLD.company_id"
	add(m0039Trigger{table: "company_file_usage", op: "INSERT", body: []string{usage("NEW")}})
	add(m0039Trigger{table: "company_file_usage", op: "UPDATE", when: distinct("company_id", "file_count", "bytes"),
		body: []string{usageGone + " AND " + moved("company_id"), usage("NEW")}})
	add(m0039Trigger{table: "company_file_usage", op: "DELETE", body: []string{usageGone}})

	// Emails and payments: each row's share of the counts and sums,
	// added and taken away (a difference commutes with a concurrent one:
	// no update is lost whatever the order of two writers).
	emailShare := map[string]string{
		"emails_total":    "1",
		"emails_unread":   fmt.Sprintf("CASE WHEN R.direction = '%s' AND R.read_at IS NULL THEN 1 ELSE 0 END", m0039Inbound),
		"emails_received": fmt.Sprintf("CASE WHEN R.direction = '%s' THEN 1 ELSE 0 END", m0039Inbound),
		"emails_sent":     fmt.Sprintf("CASE WHEN R.direction = '%s' THEN 1 ELSE 0 END", m0039Outbound),
	}
	emailCols := []string{"emails_total", "emails_unread", "emails_received", "emails_sent"}
	paymentShare := map[string]string{
		"revenue_gross":    fmt.Sprintf("CASE WHEN R.currency = '%s' THEN R.amount_cents ELSE 0 END", m0039Currency),
		"revenue_refunded": fmt.Sprintf("CASE WHEN R.currency = '%s' THEN R.refunded_cents ELSE 0 END", m0039Currency),
		"revenue_payments": fmt.Sprintf("CASE WHEN R.currency = '%s' THEN 1 ELSE 0 END", m0039Currency),
	}
	paymentCols := []string{"revenue_gross", "revenue_refunded", "revenue_payments"}
	shares := func(table string, cols []string, share map[string]string, when []string) {
		of := func(col, r string) string { return "(" + strings.ReplaceAll(share[col], "R.", r+".") + ")" }
		apply := func(r, sign, where string) string {
			sets := make([]string, len(cols))
			for i, c := range cols {
				sets[i] = fmt.Sprintf("%[1]s = %[1]s %s %s", c, sign, of(c, r))
			}
			return fmt.Sprintf("UPDATE {S} SET %s WHERE company_id = %s.company_id%s", strings.Join(sets, ", "), r, where)
		}
		add(m0039Trigger{table: table, op: "INSERT", body: []string{apply("NEW", "+", "")}})
		add(m0039Trigger{table: table, op: "DELETE", body: []string{apply("OLD", "-", "")}})
		// An update within the company is one statement (the new share
		// less the old); one that moves the row between companies is two.
		sets := make([]string, len(cols))
		for i, c := range cols {
			sets[i] = fmt.Sprintf("%[1]s = %[1]s - %s + %s", c, of(c, "OLD"), of(c, "NEW"))
		}
		add(m0039Trigger{table: table, op: "UPDATE", when: distinct(append([]string{"company_id"}, when...)...), body: []string{
			fmt.Sprintf("UPDATE {S} SET %s WHERE company_id = NEW.company_id AND OLD.company_id = NEW.company_id", strings.Join(sets, ", ")),
			apply("OLD", "-", " AND "+moved("company_id")),
			apply("NEW", "+", " AND "+moved("company_id")),
		}})
	}
	shares("company_emails", emailCols, emailShare, []string{"direction", "read_at"})
	shares("company_payments", paymentCols, paymentShare, []string{"currency", "amount_cents", "refunded_cents"})

	// The attached domain: a copy of the purchase attached to the company
	// (at most one: a unique index), cleared when it is detached, moved
	// or deleted.
	domainSet := "UPDATE {S} SET domain_id = NEW.id, domain = NEW.domain, domain_state = NEW.state WHERE company_id = NEW.attached_company_id"
	domainClear := "UPDATE {S} SET domain_id = NULL, domain = NULL, domain_state = NULL WHERE company_id = OLD.attached_company_id AND domain_id = OLD.id"
	add(m0039Trigger{table: "domain_purchases", op: "INSERT", when: "NEW.attached_company_id IS NOT NULL", body: []string{domainSet}})
	add(m0039Trigger{table: "domain_purchases", op: "UPDATE", when: distinct("id", "attached_company_id", "domain", "state"),
		body: []string{domainClear + " AND (" + moved("attached_company_id") + " OR " + moved("id") + ")", domainSet}})
	add(m0039Trigger{table: "domain_purchases", op: "DELETE", when: "OLD.attached_company_id IS NOT NULL", body: []string{domainClear}})

	// The ad campaign (one per company: its primary key).
	adSet := "UPDATE {S} SET ad_state = NEW.state, ad_daily_cap = NEW.daily_cap, ad_total_spent = NEW.total_spent, " +
		"ad_total_clicks = NEW.total_clicks, ad_creative_version = NEW.creative_version WHERE company_id = NEW.company_id"
	adClear := "UPDATE {S} SET ad_state = NULL, ad_daily_cap = NULL, ad_total_spent = NULL, ad_total_clicks = NULL, " +
		"ad_creative_version = NULL WHERE company_id = OLD.company_id"
	add(m0039Trigger{table: "ad_campaigns", op: "INSERT", body: []string{adSet}})
	add(m0039Trigger{table: "ad_campaigns", op: "UPDATE", when: distinct("company_id", "state", "daily_cap", "total_spent", "total_clicks", "creative_version"),
		body: []string{adClear + " AND " + moved("company_id"), adSet}})
	add(m0039Trigger{table: "ad_campaigns", op: "DELETE", body: []string{adClear}})

	// Resources and milestones: the kind's columns are a copy of the
	// (company, kind) row (its primary key).
	kinds := func(table string, kinds []string, cols func(string) []string, from []string) {
		set := func(r string, null bool) string {
			var sets []string
			for _, k := range kinds {
				for i, c := range cols(k) {
					v := r + "." + from[i]
					if null {
						v = "NULL"
					}
					sets = append(sets, fmt.Sprintf("%[1]s = CASE WHEN %[2]s.kind = '%[3]s' THEN %[4]s ELSE %[1]s END", c, r, k, v))
				}
			}
			return fmt.Sprintf("UPDATE {S} SET %s WHERE company_id = %s.company_id AND %s.kind IN ('%s')",
				strings.Join(sets, ", "), r, r, strings.Join(kinds, "', '"))
		}
		add(m0039Trigger{table: table, op: "INSERT", body: []string{set("NEW", false)}})
		add(m0039Trigger{table: table, op: "UPDATE", when: distinct(append([]string{"company_id", "kind"}, from...)...),
			body: []string{set("OLD", true) + " AND (" + moved("company_id") + " OR " + moved("kind") + ")", set("NEW", false)}})
		add(m0039Trigger{table: table, op: "DELETE", body: []string{set("OLD", true)}})
	}
	kinds("company_resources", m0039ResourceKinds, m0039ResourceColumns, []string{"status", "ref", "last_error", "attempts", "updated_at"})
	kinds("company_milestones", m0039MilestoneKinds, m0039MilestoneColumns, []string{"reached_at", "seen_at"})

	// The newest turn. On Postgres every turn trigger first locks the
	// company's row (FOR UPDATE): its statements, each with a fresh
	// snapshot, then see every turn committed by a writer that held the
	// row before (a delete of the newest turn racing an insert of an older
	// one, or an update of the one that becomes the newest, would
	// otherwise be missed). An insert is copied when it is newer than the
	// row's turn (LatestTurn's order: created_at, then id); an update of
	// the row's turn is copied; the row's turn deleted, or a turn's
	// company, time or id changed, reads the newest turn again (one step of
	// the (company_id, created_at) index).
	headline := func(r string) string {
		sets := make([]string, len(m0039TurnColumns))
		for i, c := range m0039TurnColumns {
			sets[i] = m0039TurnSummary[i] + " = " + r + "." + c
		}
		return strings.Join(sets, ", ")
	}
	newest := func(r string) string {
		return fmt.Sprintf("UPDATE {S} SET (%s) = (%s) WHERE company_id = %s.company_id",
			strings.Join(m0039TurnSummary, ", "), m0039NewestTurn("{T}", r+".company_id"), r)
	}
	rekeyed := "(" + distinct("company_id", "created_at", "id") + ")"
	add(m0039Trigger{table: "turns", op: "INSERT", lock: []string{"NEW.company_id"}, body: []string{
		"UPDATE {S} SET " + headline("NEW") + " WHERE company_id = NEW.company_id AND (turn_id IS NULL OR turn_created_at < NEW.created_at" +
			" OR (turn_created_at = NEW.created_at AND turn_id < NEW.id))"}})
	add(m0039Trigger{table: "turns", op: "UPDATE", when: distinct(append([]string{"company_id"}, m0039TurnColumns...)...),
		lock: []string{"OLD.company_id", "NEW.company_id"}, body: []string{
			"UPDATE {S} SET " + headline("NEW") + " WHERE company_id = NEW.company_id AND turn_id = NEW.id AND NOT " + rekeyed,
			newest("OLD") + " AND " + rekeyed,
			newest("NEW") + " AND " + rekeyed,
		}})
	add(m0039Trigger{table: "turns", op: "DELETE", lock: []string{"OLD.company_id"}, body: []string{newest("OLD") + " AND turn_id = OLD.id"}})
	return ts
}
