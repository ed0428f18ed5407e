package store

import (
	"strings"
	"testing"
	"time"
)

// TestUsageUnitPlans: on SQLite, the buckets' query reads no units, by
// endpoint or not (the view's join to usage_units is left out), and the
// queries of units start from usage_units by its ids, reading only the
// rows that have units.
func TestUsageUnitPlans(t *testing.T) {
	f := newFixture(t, backends[0])
	s := f.s.(*sqlStore)
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
