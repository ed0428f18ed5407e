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
	// This AddUsage leaves out the columns that are 0 in every row, for
	// their defaults; 0010, which gives them, touches no table of 0007's.
	applyMigrationNumbered(t, f, old, 10)
	old.labels = make(map[usageLabel]int64) // as Open makes it
	// Written without units (this code would add them to the table 0007
	// makes), which are then put in usage_units as before 0007.
	row := func(d time.Duration, key int64, unit string) Usage {
		return Usage{Time: at(d), KeyID: key, Model: "m", Endpoint: "audio.speech", Unit: unit}
	}
	must(t, old.AddUsage(f.ctx, []Usage{
		row(0, 1, UnitCharacters), row(time.Second, 1, UnitCharacters), row(2*time.Second, 1, UnitSeconds),
		row(time.Minute, 1, UnitCharacters), row(0, 2, UnitImages), row(0, 2, ""),
	}))
	_, err := old.w.ExecContext(f.ctx, `INSERT INTO usage_units (id, units) VALUES (1, 5), (2, 7), (3, 11), (4, 13), (5, 2)`)
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
