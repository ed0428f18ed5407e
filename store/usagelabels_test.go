package store

import (
	"fmt"
	"testing"
	"time"
)

// TestLabelCacheBounded: the label ids kept in memory stay within the
// bound, and a label dropped from memory gets its own id again, not a new
// label, when it comes back.
func TestLabelCacheBounded(t *testing.T) {
	f := newFixture(t, backends[0])
	s := f.s.(*sqlStore)
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
