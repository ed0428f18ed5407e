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

// TestUsageRowsChangedElsewhere: 0010 rewrites usage_rows' text only when
// it is the one 0003 made; on a table changed outside Rosetta, however
// little, Open fails naming the migration and the table is left as it
// was, 0010 not recorded.
func TestUsageRowsChangedElsewhere(t *testing.T) {
	changes := map[string]string{
		"column added": `ALTER TABLE usage_rows ADD COLUMN note TEXT`,
		"whitespace": `PRAGMA writable_schema = ON;
			UPDATE sqlite_schema SET sql = sql || ' ' WHERE name = 'usage_rows';
			PRAGMA writable_schema = RESET`,
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			f, _ := sqliteFixture(t)
			old, dsn := migratedBefore(t, f, 10)
			_, err := old.w.ExecContext(f.ctx, change)
			must(t, err)
			before := usageRowsText(t, old.w)
			must(t, old.Close())
			s, err := Open(f.ctx, "sqlite", dsn, Options{SecretKey: f.secret})
			if err == nil {
				s.Close()
				t.Fatal("Open rewrote a usage_rows changed outside Rosetta")
			}
			if msg := err.Error(); !strings.Contains(msg, "0010_usage_rows_unchecked") ||
				!strings.Contains(msg, "not the table migration 0003 made") {
				t.Fatalf("Open's error does not say which migration stopped and why: %v", err)
			}
			db, err := sql.Open("sqlite", dsn)
			must(t, err)
			defer db.Close()
			if after := usageRowsText(t, db); after != before {
				t.Fatalf("usage_rows changed by the failed migration:\n%s\nwas\n%s", after, before)
			}
			var n int
			must(t, db.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = 10`).Scan(&n))
			if n != 0 {
				t.Fatal("0010 recorded though it failed")
			}
		})
	}
}

// usageRowsText is usage_rows' text in db's schema.
func usageRowsText(t *testing.T, db *sql.DB) string {
	t.Helper()
	var text string
	must(t, db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'usage_rows'`).Scan(&text))
	return text
}
