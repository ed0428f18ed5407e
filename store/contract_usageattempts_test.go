package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// testUsageAttempts: the attempts of a request with a failed one are
// written with its row, through the usage writer's batch, and read back
// with it, in the order tried; rows without any read none; an error text
// is kept as both databases can hold it, cut at MaxAttemptError bytes; a
// batch with more attempts than one statement takes writes them all.
func testUsageAttempts(t *testing.T, f *fixture) {
	long := strings.Repeat("é", MaxAttemptError) // 2 bytes a rune: the cut falls inside one
	failedOver := []Attempt{
		{Channel: "refused", Status: 502, Error: "connection refused to 127.0.0.1:1", Duration: 3 * time.Millisecond},
		{Channel: "busy", Status: 503, Error: "HTTP 503: bad \xff byte and a \x00 NUL", Duration: 40 * time.Millisecond},
		{Channel: "demo", Status: 200, Duration: 1200 * time.Millisecond},
	}
	failed := []Attempt{{Channel: "slow", Status: 504, Error: long, Duration: time.Minute}}
	w := NewUsageWriter(f.s, UsageWriterOptions{Batch: 3, Interval: 10 * time.Millisecond,
		OnError: func(err error) { t.Errorf("usage writer: %v", err) }})
	rows := []Usage{
		{Time: at(0), KeyID: 1, KeyName: "k", Channel: "demo", Status: 200, RequestID: "failed-over", Attempts: failedOver},
		{Time: at(time.Second), KeyID: 1, KeyName: "k", Channel: "demo", Status: 200, RequestID: "plain"},
		{Time: at(2 * time.Second), KeyID: 1, KeyName: "k", Channel: "slow", Status: 504, RequestID: "failed", Attempts: failed},
	}
	for _, u := range rows {
		w.Record(u)
	}
	must(t, w.Close(f.ctx))

	got, err := f.s.Usage(f.ctx, UsageFilter{})
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3", len(got))
	}
	byID := map[string][]Attempt{}
	for _, u := range got {
		byID[u.RequestID] = u.Attempts
	}
	stored := append([]Attempt(nil), failedOver...)
	stored[1].Error = "HTTP 503: bad \uFFFD byte and a  NUL"
	wantEqual(t, "attempts of the failed-over request", byID["failed-over"], stored)
	if byID["plain"] != nil {
		t.Errorf("a request answered at once has attempts: %+v", byID["plain"])
	}
	cut := byID["failed"]
	if len(cut) != 1 || len(cut[0].Error) > MaxAttemptError || !strings.HasSuffix(cut[0].Error, "é…") ||
		!strings.HasPrefix(long, strings.TrimSuffix(cut[0].Error, "…")) || cut[0].Duration != time.Minute {
		t.Errorf("a long error: %d bytes, %+v", len(cut[0].Error), cut)
	}

	// One batch of more attempts than a statement carries.
	many := make([]Usage, attemptsPerStatement)
	for i := range many {
		many[i] = Usage{Time: at(time.Hour), KeyID: 2, RequestID: fmt.Sprint(i), Attempts: []Attempt{
			{Channel: "a", Status: 429, Error: fmt.Sprint("busy ", i)}, {Channel: "b", Status: 200}}}
	}
	must(t, f.s.AddUsage(f.ctx, many))
	got, err = f.s.Usage(f.ctx, UsageFilter{KeyIDs: []int64{2}, Limit: len(many)})
	must(t, err)
	for _, u := range got {
		if len(u.Attempts) != 2 || u.Attempts[0].Error != "busy "+u.RequestID || u.Attempts[1].Channel != "b" {
			t.Fatalf("request %s of the large batch: %+v", u.RequestID, u.Attempts)
		}
	}
}

// testDeleteUsageAttempts: retention deletes the attempts of the rows it
// deletes and keeps those of the others; deleting the key, which keeps its
// usage rows, keeps their attempts too.
func testDeleteUsageAttempts(t *testing.T, f *fixture) {
	k := f.key(t, 0, "k")
	tried := []Attempt{{Channel: "a", Status: 502, Error: "refused"}, {Channel: "b", Status: 200}}
	must(t, f.s.AddUsage(f.ctx, []Usage{
		{Time: at(0), KeyID: k.ID, RequestID: "old", Attempts: tried},
		{Time: at(time.Hour), KeyID: k.ID, RequestID: "new", Attempts: tried},
	}))
	must(t, f.s.DeleteKey(f.ctx, k.ID))
	if n := f.count(t, `SELECT COUNT(*) FROM usage_attempts`); n != 4 {
		t.Fatalf("%d attempts after the key was deleted, want 4", n)
	}
	n, err := f.s.DeleteUsageBefore(f.ctx, at(time.Minute))
	must(t, err)
	if n != 1 {
		t.Fatalf("DeleteUsageBefore deleted %d rows, want 1", n)
	}
	got, err := f.s.Usage(f.ctx, UsageFilter{})
	must(t, err)
	if len(got) != 1 || got[0].RequestID != "new" || len(got[0].Attempts) != 2 {
		t.Fatalf("after retention: %+v", got)
	}
	if n := f.count(t, `SELECT COUNT(*) FROM usage_attempts`); n != 2 {
		t.Fatalf("%d attempts left, want the 2 of the row kept", n)
	}
}
