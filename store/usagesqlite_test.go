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

// TestUsageSameColumns: a batch's columns that are the same in every row
// are bound once (left out for their default when 0), the others read row
// by row; either way every row reads back as written, whichever of its
// columns vary, in batches of one row too.
func TestUsageSameColumns(t *testing.T) {
	f, s := sqliteFixture(t)
	base := Usage{KeyID: 3, KeyName: "k", Model: "m", Channel: "c", Status: 200, Input: 10, Output: 20, Cached: 0,
		Reasoning: 0, Latency: time.Second, FirstToken: time.Millisecond, ClientStyle: "openai", Endpoint: "chat"}
	vary := map[string]func(u *Usage, i int){
		"none":   func(*Usage, int) {},
		"zeros":  func(u *Usage, _ int) { u.Input, u.Output, u.FirstToken = 0, 0, 0 },
		"label":  func(u *Usage, i int) { u.Model = fmt.Sprint("m", i) },
		"input":  func(u *Usage, i int) { u.Input += int64(i) },
		"output": func(u *Usage, i int) { u.Output += int64(i) },
		"cached": func(u *Usage, i int) { u.Cached = int64(i) },
		"reason": func(u *Usage, i int) { u.Reasoning = int64(i) },
		"first":  func(u *Usage, i int) { u.FirstToken += time.Duration(i) },
		"all": func(u *Usage, i int) {
			u.Model, u.Input, u.Output, u.Cached, u.Reasoning = fmt.Sprint("m", i), int64(i), int64(2*i), int64(3*i), int64(4*i)
			u.FirstToken = time.Duration(i)
		},
	}
	var want []Usage
	for name, change := range vary {
		for _, n := range []int{1, 3} {
			var batch []Usage
			for i := range n {
				u := base
				u.Time, u.Latency = at(time.Duration(len(want))), time.Second+time.Duration(len(want))
				u.RequestID = fmt.Sprint(name, "-", n, "-", i)
				change(&u, i)
				batch = append(batch, u)
				want = append(want, u)
			}
			must(t, s.AddUsage(f.ctx, batch))
		}
	}
	got, err := s.Usage(f.ctx, UsageFilter{Limit: 1000})
	must(t, err)
	byID := map[string]Usage{}
	for _, u := range got {
		u.ID = 0
		byID[u.RequestID] = u
	}
	for _, w := range want {
		if g := byID[w.RequestID]; !g.Time.Equal(w.Time) || g.Model != w.Model || g.Input != w.Input || g.Output != w.Output ||
			g.Cached != w.Cached || g.Reasoning != w.Reasoning || g.Latency != w.Latency || g.FirstToken != w.FirstToken {
			t.Errorf("row %s reads %+v, want %+v", w.RequestID, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	if n := len(s.stmts.inserts); n < 8 {
		t.Errorf("%d INSERTs prepared, want one for each set of columns alike: at least 8", n)
	}
	zeros := insertKey{same: 0b10111110, zero: 0b10111100}
	if s.stmts.inserts[zeros] == nil {
		t.Errorf("no INSERT leaving out the columns at 0 in every row: %v", s.stmts.inserts)
	}
	if q, want := insertRowsSQLite(zeros), `INSERT OR FAIL INTO usage_rows (time_ns, label_id, latency_ns, request_id) `+
		`SELECT time_ns, $1, latency_ns, request_id FROM temp.usage_batch ORDER BY rowid`; q != want {
		t.Errorf("the INSERT of %+v:\n%s\nwant\n%s", zeros, q, want)
	}
}

// TestUsageRowsDefaults: on SQLite each column a batch may leave out at 0
// has a DEFAULT in usage_rows, as the writer's INSERT needs (without one
// the row would hold NULL, which no write refuses since 0010 but which
// breaks every Usage query that reads it), and the others have none, the
// label above all (a row at a default label is missing from usage_log).
func TestUsageRowsDefaults(t *testing.T) {
	f, _ := sqliteFixture(t)
	rows, err := f.raw().QueryContext(f.ctx, `SELECT name, dflt_value IS NOT NULL FROM pragma_table_info('usage_rows')`)
	must(t, err)
	defer rows.Close()
	hasDefault := map[string]bool{}
	for rows.Next() {
		var name string
		var ok bool
		must(t, rows.Scan(&name, &ok))
		hasDefault[name] = ok
	}
	must(t, rows.Err())
	for i, col := range strings.Split(rowCols, ",") {
		col = strings.TrimSpace(col)
		if leftOut := zeroColumns&(1<<i) != 0; hasDefault[col] != leftOut {
			t.Errorf("usage_rows.%s has a DEFAULT: %v; the writer may leave it out: %v", col, hasDefault[col], leftOut)
		}
	}
}

// TestUsageLabelNeverLeftOut: a batch whose label ids are all 0 binds the
// label rather than leave it out, while its token columns at 0 are left
// out.
func TestUsageLabelNeverLeftOut(t *testing.T) {
	var slot batchSlot
	slot.fill([]Usage{{Latency: 1}, {Latency: 2}}, []int64{0, 0})
	k, args := sameValues(&slot, nil)
	if want := (insertKey{same: 0b10111110, zero: 0b10111100}); k != want {
		t.Errorf("columns taken once: %+v, want %+v", k, want)
	}
	if len(args) != 1 || args[0].Value != int64(0) {
		t.Errorf("bound: %v, want the label 0 alone", args)
	}
}
