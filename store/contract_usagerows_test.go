package store

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

// testUsageRowsUncheckedMigration writes a row into the schema of 0009 and
// opens the store, which applies 0010: on SQLite usage_rows loses its NOT
// NULL, STRICT and column types in place, the old row reads back as it was, new
// rows are written after it, the file is sound, and a connection that read
// the schema before the migration reads it again (it can then insert what
// the old text refused).
func testUsageRowsUncheckedMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 10)
	insertOldUsageRow(t, f, old)
	var other *sql.DB
	if f.driver == "sqlite" {
		var err error
		other, err = sql.Open("sqlite", dsn)
		must(t, err)
		defer other.Close()
		other.SetMaxOpenConns(1)
		var n int
		must(t, other.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM usage_rows`).Scan(&n))
	}
	g := reopen(t, f, old, dsn)
	oldRow := Usage{ID: 1, Time: at(0), KeyID: 1, KeyName: "k", Model: "m", Channel: "ch", Status: 200, Input: 5,
		Output: 6, Latency: time.Microsecond, RequestID: "old", ClientStyle: "openai"}
	newRow := oldRow
	newRow.ID, newRow.Time, newRow.RequestID, newRow.Cached, newRow.Reasoning = 2, at(time.Second), "new", 3, 4
	must(t, g.s.AddUsage(f.ctx, []Usage{newRow}))
	got, err := g.s.Usage(f.ctx, UsageFilter{})
	must(t, err)
	wantEqual(t, "rows", got, []Usage{newRow, oldRow})
	if f.driver != "sqlite" {
		return
	}
	var text, check string
	must(t, g.raw().QueryRowContext(f.ctx, `SELECT sql FROM sqlite_schema WHERE name = 'usage_rows'`).Scan(&text))
	if strings.Contains(text, "NOT NULL") || strings.Contains(text, "STRICT") || strings.Count(text, "INTEGER") != 1 {
		t.Fatalf("usage_rows after 0010:\n%s", text)
	}
	must(t, g.raw().QueryRowContext(f.ctx, `PRAGMA integrity_check`).Scan(&check))
	if check != "ok" {
		t.Fatalf("integrity_check after 0010: %s", check)
	}
	if _, err := other.ExecContext(f.ctx, `INSERT INTO usage_rows (id, time_ns, label_id) VALUES (3, 0, 7)`); err != nil {
		t.Fatalf("a connection opened before 0010 still checks the old schema: %v", err)
	}
}

// insertOldUsageRow writes label 7 and usage row 1 into a schema from
// before 0010, as the writer of that time did.
func insertOldUsageRow(t *testing.T, f *fixture, old *sqlStore) {
	t.Helper()
	label := `INSERT INTO usage_labels (id, key_id, key_name, model, channel, status, client_style, endpoint, unit)
		OVERRIDING SYSTEM VALUE VALUES (7, 1, 'k', 'm', 'ch', 200, 'openai', '', '')`
	if f.driver == "sqlite" { // SQLite has no OVERRIDING clause
		label = strings.Replace(label, "OVERRIDING SYSTEM VALUE ", "", 1)
	}
	_, err := old.w.ExecContext(f.ctx, label)
	must(t, err)
	_, err = old.w.ExecContext(f.ctx, `INSERT INTO usage_rows (id, time_ns, label_id, input_tokens, output_tokens,
		cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id) VALUES (1, $1, 7, 5, 6, 0, 0, 1000, 0, 'old')`,
		toNS(at(0)))
	must(t, err)
}
