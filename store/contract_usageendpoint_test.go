package store

import (
	"strings"
	"testing"
	"time"
)

// testUsageEndpointMigration writes rows into the schema of migration 0003
// and then opens the store, which applies 0005: the old rows keep
// their labels' ids with the endpoint and unit "", and a row of the same
// label with an endpoint and units gets a label of its own.
func testUsageEndpointMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 5)
	insertOldUsageRow(t, f, old, `key_id, key_name, model, channel, status, client_style`,
		`(7, 1, 'k', 'm', 'ch', 200, 'openai')`)
	g := reopen(t, f, old, dsn)
	if n := g.count(t, `SELECT COUNT(*) FROM usage_labels WHERE id = 7 AND endpoint = '' AND unit = ''`); n != 1 {
		t.Fatalf("label 7 after the migration: %d rows with endpoint ''", n)
	}
	newRow := addAfterOldRow(t, g, func(u *Usage) { u.Endpoint, u.Units, u.Unit = "rerank", 3, UnitSearchUnits })
	got, err := g.s.Usage(f.ctx, UsageFilter{Endpoint: "rerank"})
	must(t, err)
	wantEqual(t, "rows of rerank", got, []Usage{newRow})
	if n := g.count(t, `SELECT COUNT(*) FROM usage_labels`); n != 2 {
		t.Fatalf("%d labels, want the old one and rerank's", n)
	}
}

// usageRowCols0003 are the columns of usage_rows since migration 0003.
const usageRowCols0003 = `id, time_ns, label_id, input_tokens, output_tokens, cached_tokens, reasoning_tokens,
	latency_ns, first_token_ns, request_id`

// insertOldLabels writes labels with their ids (values, rows of the
// columns id and cols) into a schema from before the migration under test.
func insertOldLabels(t *testing.T, f *fixture, old *sqlStore, cols, values string) {
	t.Helper()
	q := `INSERT INTO usage_labels (id, ` + cols + `) OVERRIDING SYSTEM VALUE VALUES ` + values
	if f.driver == "sqlite" { // SQLite has no OVERRIDING clause
		q = strings.Replace(q, "OVERRIDING SYSTEM VALUE ", "", 1)
	}
	_, err := old.w.ExecContext(f.ctx, q)
	must(t, err)
}

// insertOldUsageRow writes label 7 (labelValues, the columns id and
// labelCols) and usage row 1 of that label, every column given, into a
// schema from before the migration under test: oldUsageRow reads it back.
func insertOldUsageRow(t *testing.T, f *fixture, old *sqlStore, labelCols, labelValues string) {
	t.Helper()
	insertOldLabels(t, f, old, labelCols, labelValues)
	_, err := old.w.ExecContext(f.ctx, `INSERT INTO usage_rows (`+usageRowCols0003+`)
		VALUES (1, $1, 7, 5, 6, 0, 0, 1000, 0, 'old')`, toNS(at(0)))
	must(t, err)
}

// oldUsageRow is the row insertOldUsageRow writes, as Usage reads it.
func oldUsageRow() Usage {
	return Usage{ID: 1, Time: at(0), KeyID: 1, KeyName: "k", Model: "m", Channel: "ch", Status: 200, Input: 5,
		Output: 6, Latency: time.Microsecond, RequestID: "old", ClientStyle: "openai"}
}

// addAfterOldRow adds, after the migration, a row like oldUsageRow's
// changed by change, and checks that Usage reads both back, newest first;
// it returns the new row.
func addAfterOldRow(t *testing.T, g *fixture, change func(*Usage)) Usage {
	t.Helper()
	oldRow, newRow := oldUsageRow(), oldUsageRow()
	newRow.ID, newRow.Time, newRow.RequestID = 2, at(time.Second), "new"
	change(&newRow)
	must(t, g.s.AddUsage(g.ctx, []Usage{newRow}))
	got, err := g.s.Usage(g.ctx, UsageFilter{})
	must(t, err)
	wantEqual(t, "rows", got, []Usage{newRow, oldRow})
	return newRow
}
