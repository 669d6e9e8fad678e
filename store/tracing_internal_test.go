package store

import "testing"

// The span's operation and table come from the statement's identifiers
// only: a function call, a subquery or a value is never taken for a
// table.
func TestSpanNamesFromSQL(t *testing.T) {
	for _, c := range []struct{ sql, op, table string }{
		{`SELECT * FROM "companies" WHERE id = $1`, "SELECT", "companies"},
		{"SELECT * FROM `companies` WHERE id = ?", "SELECT", "companies"},
		{`INSERT INTO "users" ("id","email") VALUES ($1,$2)`, "INSERT", "users"},
		{"  update company_file_usage SET file_count = file_count + ? WHERE company_id = ?", "UPDATE", "company_file_usage"},
		{`DELETE FROM public.turns WHERE id = $1`, "DELETE", "public.turns"},
		{"SELECT COUNT(pg_advisory_xact_lock(hashtext('x' || c))) FROM unnest($1::text[]) AS c", "SELECT", ""},
		{"SELECT t.company_id FROM (SELECT company_id FROM turns) AS n JOIN conglomerates c ON true", "SELECT", "turns"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "WITH", "x"},
		{"SELECT CAST(? AS TEXT) AS v", "SELECT", ""},
		{"SELECT 1", "SELECT", ""},
		{"(SELECT 1)", "", ""},
		{"", "", ""},
		{"SELECT name FROM t WHERE note = 'from me'", "SELECT", "t"},
	} {
		if got := firstKeyword(c.sql); got != c.op {
			t.Errorf("firstKeyword(%q) = %q, want %q", c.sql, got, c.op)
		}
		if got := firstTable(c.sql); got != c.table {
			t.Errorf("firstTable(%q) = %q, want %q", c.sql, got, c.table)
		}
	}
	for _, c := range []struct{ expr, table string }{
		{`"conglomerates" AS "g"`, "conglomerates"},
		{"company_provisioning p", "company_provisioning"},
		{`"public"."turns"`, "public.turns"},
		{"(?) AS u", ""},
	} {
		if got := leadingTable(c.expr); got != c.table {
			t.Errorf("leadingTable(%q) = %q, want %q", c.expr, got, c.table)
		}
	}
}
