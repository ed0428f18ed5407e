package store

import (
	"testing"
	"time"
)

// testUsageEndpointMigration writes rows into the schema of migration 0003
// and then opens the store, which applies 0005: the old rows keep
// their labels' ids with the endpoint and unit "", and a row of the same
// label with an endpoint and units gets a label of its own.
func testUsageEndpointMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 5)
	_, err := old.w.ExecContext(f.ctx, `INSERT INTO usage_labels (id, key_id, key_name, model, channel, status, client_style)
		OVERRIDING SYSTEM VALUE VALUES (7, 1, 'k', 'm', 'ch', 200, 'openai')`)
	if f.driver == "sqlite" { // SQLite has no OVERRIDING clause
		_, err = old.w.ExecContext(f.ctx, `INSERT INTO usage_labels (id, key_id, key_name, model, channel, status, client_style)
			VALUES (7, 1, 'k', 'm', 'ch', 200, 'openai')`)
	}
	must(t, err)
	_, err = old.w.ExecContext(f.ctx, `INSERT INTO usage_rows (id, time_ns, label_id, input_tokens, output_tokens,
		cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id) VALUES (1, $1, 7, 5, 6, 0, 0, 1000, 0, 'old')`,
		toNS(at(0)))
	must(t, err)
	g := reopen(t, f, old, dsn)
	if n := g.count(t, `SELECT COUNT(*) FROM usage_labels WHERE id = 7 AND endpoint = '' AND unit = ''`); n != 1 {
		t.Fatalf("label 7 after the migration: %d rows with endpoint ''", n)
	}
	oldRow := Usage{ID: 1, Time: at(0), KeyID: 1, KeyName: "k", Model: "m", Channel: "ch", Status: 200, Input: 5,
		Output: 6, Latency: time.Microsecond, RequestID: "old", ClientStyle: "openai"}
	newRow := oldRow
	newRow.ID, newRow.Time, newRow.RequestID, newRow.Endpoint = 2, at(time.Second), "new", "rerank"
	newRow.Units, newRow.Unit = 3, UnitSearchUnits
	must(t, g.s.AddUsage(f.ctx, []Usage{newRow}))
	got, err := g.s.Usage(f.ctx, UsageFilter{})
	must(t, err)
	wantEqual(t, "rows", got, []Usage{newRow, oldRow})
	got, err = g.s.Usage(f.ctx, UsageFilter{Endpoint: "rerank"})
	must(t, err)
	wantEqual(t, "rows of rerank", got, []Usage{newRow})
	if n := g.count(t, `SELECT COUNT(*) FROM usage_labels`); n != 2 {
		t.Fatalf("%d labels, want the old one and rerank's", n)
	}
}
