package store

// Tests of the usage log's workings on SQLite alone: what the contract
// suite cannot see from outside.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sqliteFixture is a fixture on a new SQLite database, with its store.
func sqliteFixture(t *testing.T) (*fixture, *sqlStore) {
	f := newFixture(t, backends[0])
	return f, f.s.(*sqlStore)
}

// TestLabelCacheBounded: the label ids kept in memory stay within the
// bound, and a label dropped from memory gets its own id again, not a new
// label, when it comes back.
func TestLabelCacheBounded(t *testing.T) {
	f, s := sqliteFixture(t)
	s.labelsMax = 4
	var rows []Usage
	for round := range 3 {
		for model := range 10 {
			rows = append(rows, Usage{Time: at(time.Duration(len(rows))), KeyID: 1, Model: fmt.Sprint("m", model),
				RequestID: fmt.Sprint(round, "-", model)})
		}
	}
	for i := 0; i < len(rows); i += 7 {
		must(t, s.AddUsage(f.ctx, rows[i:min(i+7, len(rows))]))
		if n := len(s.labels); n > 4 {
			t.Fatalf("%d label ids in memory, bound 4", n)
		}
	}
	if n := f.count(t, `SELECT COUNT(*) FROM usage_labels`); n != 10 {
		t.Fatalf("%d labels in the database, want one per model: 10", n)
	}
	got, err := s.Usage(f.ctx, UsageFilter{Limit: 100})
	must(t, err)
	for _, u := range got {
		if want := "m" + u.RequestID[len(u.RequestID)-1:]; u.Model != want {
			t.Fatalf("row %s reads model %s, want %s", u.RequestID, u.Model, want)
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
}

// TestUsageUnitPlans: on SQLite, the buckets' query reads no units, by
// endpoint or not (the view's join to usage_units is left out), and the
// queries of units start from usage_units by its ids, reading only the
// rows that have units.
func TestUsageUnitPlans(t *testing.T) {
	f, s := sqliteFixture(t)
	plan := func(query string, args ...any) string {
		t.Helper()
		rows, err := s.r.QueryContext(f.ctx, "EXPLAIN QUERY PLAN "+query, args...)
		must(t, err)
		defer rows.Close()
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var step string
			must(t, rows.Scan(&id, &parent, &unused, &step))
			steps = append(steps, step)
		}
		return strings.Join(steps, "; ")
	}
	filter := UsageFilter{From: at(0), To: at(time.Hour), KeyIDs: []int64{1, 2}, Model: "m"}
	w := (&where{args: []any{int64(time.Minute)}})
	w.add("id >= $%d", int64(1))
	w.add("id <= $%d", int64(1000))
	w = w.usage(filter)
	for _, endpoint := range []string{"''", "endpoint"} {
		if p := plan(bucketsSQL(endpoint, "1, key_id, model", w), w.args...); strings.Contains(p, "SEARCH u ") {
			t.Errorf("the buckets' query (endpoint %s) reads usage_units: %s", endpoint, p)
		}
		if p := plan(bucketUnitsSQL(endpoint, w), w.args...); !strings.HasPrefix(p, "SEARCH u USING INTEGER PRIMARY KEY") {
			t.Errorf("the buckets' units (endpoint %s) are not read from usage_units first: %s", endpoint, p)
		}
	}
}
