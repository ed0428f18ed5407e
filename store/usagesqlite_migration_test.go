package store

// Migration 0010, which changes usage_rows on SQLite alone (PostgreSQL's
// 0010 is an empty step).

import (
	"database/sql"
	"strings"
	"testing"
)

// TestUsageRowsUncheckedMigration writes a row into the schema of 0009 and
// opens the store, which applies 0010: usage_rows loses its NOT NULL,
// STRICT and column types in place, the old row reads back as it was, new
// rows are written after it, the file is sound, and a connection that read
// the schema before the migration reads it again (it can then insert what
// the old text refused).
func TestUsageRowsUncheckedMigration(t *testing.T) {
	f, _ := sqliteFixture(t)
	old, dsn := migratedBefore(t, f, 10)
	insertOldUsageRow(t, f, old, `key_id, key_name, model, channel, status, client_style, endpoint, unit`,
		`(7, 1, 'k', 'm', 'ch', 200, 'openai', '', '')`)
	other, err := sql.Open("sqlite", dsn)
	must(t, err)
	defer other.Close()
	other.SetMaxOpenConns(1)
	var n int
	must(t, other.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM usage_rows`).Scan(&n))
	g := reopen(t, f, old, dsn)
	addAfterOldRow(t, g, func(u *Usage) { u.Cached, u.Reasoning = 3, 4 })
	if text := usageRowsText(t, g.raw()); strings.Contains(text, "NOT NULL") || strings.Contains(text, "STRICT") ||
		strings.Count(text, "INTEGER") != 1 {
		t.Fatalf("usage_rows after 0010:\n%s", text)
	}
	var check string
	must(t, g.raw().QueryRowContext(f.ctx, `PRAGMA integrity_check`).Scan(&check))
	if check != "ok" {
		t.Fatalf("integrity_check after 0010: %s", check)
	}
	if _, err := other.ExecContext(f.ctx, `INSERT INTO usage_rows (id, time_ns, label_id) VALUES (3, 0, 7)`); err != nil {
		t.Fatalf("a connection opened before 0010 still checks the old schema: %v", err)
	}
}

// usageRowsText is usage_rows' text in db's schema.
func usageRowsText(t *testing.T, db *sql.DB) string {
	t.Helper()
	var text string
	must(t, db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'usage_rows'`).Scan(&text))
	return text
}
