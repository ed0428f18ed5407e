package store

import (
	"testing"
	"time"
)

// testUsageUnitsMigration writes rows with units into the schema before
// migration 0007 and then opens the store, which applies it: their units
// are in the per-minute totals, summed by key, minute and unit, and rows
// written after add to them.
func testUsageUnitsMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 7)
	// Rows as the writer before 0007 left them, every column given (label
	// ids clear of those PostgreSQL's identity gives next), and their units
	// in usage_units.
	insertOldLabels(t, f, old, `key_id, key_name, model, channel, status, client_style, endpoint, unit`,
		`(11, 1, '', 'm', '', 0, '', 'audio.speech', 'characters'), (12, 1, '', 'm', '', 0, '', 'audio.speech', 'seconds'),
		(13, 2, '', 'm', '', 0, '', 'audio.speech', 'images'), (14, 2, '', 'm', '', 0, '', 'audio.speech', '')`)
	_, err := old.w.ExecContext(f.ctx, `INSERT INTO usage_rows (`+usageRowCols0003+`) VALUES
		(1, $1, 11, 0, 0, 0, 0, 0, 0, ''), (2, $2, 11, 0, 0, 0, 0, 0, 0, ''), (3, $3, 12, 0, 0, 0, 0, 0, 0, ''),
		(4, $4, 11, 0, 0, 0, 0, 0, 0, ''), (5, $1, 13, 0, 0, 0, 0, 0, 0, ''), (6, $1, 14, 0, 0, 0, 0, 0, 0, '')`,
		toNS(at(0)), toNS(at(time.Second)), toNS(at(2*time.Second)), toNS(at(time.Minute)))
	must(t, err)
	_, err = old.w.ExecContext(f.ctx, `INSERT INTO usage_minutes (key_id, minute, first_id, last_id, requests,
			input_tokens, output_tokens)
		SELECT l.key_id, r.time_ns / 60000000000, MIN(r.id), MAX(r.id), COUNT(*), SUM(r.input_tokens), SUM(r.output_tokens)
		FROM usage_rows r JOIN usage_labels l ON l.id = r.label_id GROUP BY l.key_id, r.time_ns / 60000000000`)
	must(t, err)
	_, err = old.w.ExecContext(f.ctx, `INSERT INTO usage_units (id, units) VALUES (1, 5), (2, 7), (3, 11), (4, 13), (5, 2)`)
	must(t, err)
	g := reopen(t, f, old, dsn)
	if n := g.count(t, `SELECT COUNT(*) FROM usage_minute_units`); n != 4 {
		t.Fatalf("%d entries in usage_minute_units, want 4 (key 1: two minutes of characters, one of seconds; key 2: images)", n)
	}
	must(t, g.s.AddUsage(f.ctx, []Usage{{Time: at(3 * time.Second), KeyID: 1, Units: 100, Unit: UnitCharacters}}))
	got, err := g.s.Spend(f.ctx, nil)
	must(t, err)
	wantEqual(t, "Spend", got, map[int64]Spend{
		1: {Requests: 5, Units: map[string]int64{UnitCharacters: 125, UnitSeconds: 11}},
		2: {Requests: 2, Units: map[string]int64{UnitImages: 2}},
	})
}
