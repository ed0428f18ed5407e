package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// usageRows are 30 rows a minute apart over two keys, three models, two
// channels, three endpoints (one with units), some of them rate limited.
func usageRows() []Usage {
	rows := make([]Usage, 30)
	for i := range rows {
		rows[i] = Usage{Time: at(time.Duration(i) * time.Minute), KeyID: int64(1 + i%2), KeyName: fmt.Sprintf("k%d", 1+i%2),
			Model: []string{"m-a", "m-b", "m-c"}[i%3], Channel: "ch1", Status: 200,
			Input: int64(i), Output: int64(2 * i), Cached: 3, Reasoning: 4,
			Latency: time.Duration(i) * time.Millisecond, FirstToken: time.Duration(i) * time.Microsecond,
			RequestID: fmt.Sprintf("r%02d", i), ClientStyle: "openai", Endpoint: "chat"}
		if i%4 == 0 {
			rows[i].Endpoint = "embeddings"
		}
		if i%3 == 2 {
			rows[i].Endpoint, rows[i].Units, rows[i].Unit = "audio.transcriptions", int64(i), UnitSeconds
		}
		if i%5 == 0 {
			rows[i].Channel = "ch2"
		}
		if i%7 == 0 {
			rows[i].Status = 429
		}
	}
	return rows
}

func testUsageFilter(t *testing.T, f *fixture) {
	rows := usageRows()
	must(t, f.s.AddUsage(f.ctx, rows))
	cases := []struct {
		name   string
		filter UsageFilter
		keep   func(u *Usage) bool
	}{
		{"none", UsageFilter{}, func(*Usage) bool { return true }},
		{"From", UsageFilter{From: at(10 * time.Minute)}, func(u *Usage) bool { return !u.Time.Before(at(10 * time.Minute)) }},
		{"To", UsageFilter{To: at(10 * time.Minute)}, func(u *Usage) bool { return u.Time.Before(at(10 * time.Minute)) }},
		{"KeyIDs", UsageFilter{KeyIDs: []int64{2, 9}}, func(u *Usage) bool { return u.KeyID == 2 }},
		{"Model", UsageFilter{Model: "m-b"}, func(u *Usage) bool { return u.Model == "m-b" }},
		{"Channel", UsageFilter{Channel: "ch2"}, func(u *Usage) bool { return u.Channel == "ch2" }},
		{"Status", UsageFilter{Status: 429}, func(u *Usage) bool { return u.Status == 429 }},
		{"Endpoint", UsageFilter{Endpoint: "embeddings"}, func(u *Usage) bool { return u.Endpoint == "embeddings" }},
		{"all of them", UsageFilter{From: at(5 * time.Minute), To: at(25 * time.Minute), KeyIDs: []int64{1}, Model: "m-a",
			Channel: "ch1", Status: 200, Endpoint: "chat"},
			func(u *Usage) bool {
				return u.Time.Sub(at(5*time.Minute)) >= 0 && u.Time.Before(at(25*time.Minute)) && u.KeyID == 1 &&
					u.Model == "m-a" && u.Channel == "ch1" && u.Status == 200 && u.Endpoint == "chat"
			}},
		{"no match", UsageFilter{Model: "nothing"}, func(*Usage) bool { return false }},
	}
	for _, c := range cases {
		got, err := f.s.Usage(f.ctx, c.filter)
		must(t, err)
		var want []string
		for i := range rows {
			if c.keep(&rows[i]) {
				want = append(want, rows[i].RequestID)
			}
		}
		wantEqual(t, c.name+": request ids", requestIDs(got), want)
		checkNewestFirst(t, got)
	}

	// A row comes back whole.
	got, err := f.s.Usage(f.ctx, UsageFilter{Limit: 1})
	must(t, err)
	want := rows[len(rows)-1]
	want.ID = got[0].ID
	wantEqual(t, "the newest row", got[0], want)
}

// requestIDs are the rows' request ids, oldest first.
func requestIDs(rows []Usage) []string {
	var ids []string
	for _, u := range rows {
		ids = append(ids, u.RequestID)
	}
	slices.Sort(ids)
	return ids
}

func checkNewestFirst(t *testing.T, rows []Usage) {
	t.Helper()
	for i := 1; i < len(rows); i++ {
		if rows[i].ID >= rows[i-1].ID {
			t.Fatalf("rows not newest first: id %d after %d", rows[i].ID, rows[i-1].ID)
		}
	}
}

func testUsagePaging(t *testing.T, f *fixture) {
	const n = 600 // 256+256+64+16+8 rows per INSERT; they alternate between models x and y
	rows := make([]Usage, n)
	for i := range rows {
		rows[i] = Usage{Time: at(time.Duration(i) * time.Second), KeyID: 1, Model: []string{"x", "y"}[i%2], RequestID: fmt.Sprint(i)}
	}
	must(t, f.s.AddUsage(f.ctx, rows))
	// The cap of 10,000 is usageLimit's (TestUsageLimit): filling 10,000
	// rows through the pure-Go SQLite under the race detector takes seconds.
	for _, c := range []struct{ limit, want int }{{0, 100}, {-1, 100}, {3, 3}, {20_000, n}} {
		got, err := f.s.Usage(f.ctx, UsageFilter{Limit: c.limit})
		must(t, err)
		if len(got) != c.want {
			t.Fatalf("Limit %d returned %d rows, want %d", c.limit, len(got), c.want)
		}
	}
	// Page through every "y" row: each exactly once, newest first.
	seen := map[string]bool{}
	var before int64
	for page := 0; ; page++ {
		got, err := f.s.Usage(f.ctx, UsageFilter{Model: "y", Limit: 9, BeforeID: before})
		must(t, err)
		if len(got) == 0 {
			break
		}
		checkNewestFirst(t, got)
		if before != 0 && got[0].ID >= before {
			t.Fatalf("page %d starts at id %d, not before %d", page, got[0].ID, before)
		}
		for _, u := range got {
			if u.Model != "y" || seen[u.RequestID] {
				t.Fatalf("page %d: row %+v is not a new y row", page, u)
			}
			seen[u.RequestID] = true
		}
		before = got[len(got)-1].ID
	}
	if len(seen) != n/2 {
		t.Fatalf("paging saw %d rows, want %d", len(seen), n/2)
	}
}

func testUsageBuckets(t *testing.T, f *fixture) {
	var rows []Usage
	add := func(d time.Duration, key int64, model string, latency time.Duration, status int) {
		rows = append(rows, Usage{Time: at(d), KeyID: key, Model: model, Status: status, Latency: latency,
			Input: 1, Output: 2, Cached: 3, Reasoning: 4})
	}
	// Key 1, model m, first minute: latencies 1..100 ms, one in ten failing.
	for i := range 100 {
		status := 200
		if i%10 == 0 {
			status = 500
		}
		add(time.Duration(i)*500*time.Millisecond, 1, "m", time.Duration(100-i)*time.Millisecond, status)
	}
	add(59*time.Second, 1, "a", 7*time.Millisecond, 200)
	for _, ms := range []int{30, 10, 20} {
		add(time.Second, 2, "m", time.Duration(ms)*time.Millisecond, 200)
	}
	add(time.Minute, 1, "m", 5*time.Millisecond, 200) // on a boundary: the next bucket
	add(2*time.Minute, 1, "m", time.Millisecond, 200)
	add(-time.Nanosecond, 1, "m", time.Millisecond, 200)
	rand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] }) // the database must sort
	must(t, f.s.AddUsage(f.ctx, rows))

	bucket := func(start time.Duration, key int64, model string, n, errs int64, p50, p99 time.Duration) UsageBucket {
		return UsageBucket{Start: at(start), KeyID: key, Model: model, Requests: n, Errors: errs,
			Input: n, Output: 2 * n, Cached: 3 * n, Reasoning: 4 * n, LatencyP50: p50, LatencyP99: p99}
	}
	ms := time.Millisecond
	got, err := f.s.UsageBuckets(f.ctx, UsageFilter{From: at(0), To: at(2 * time.Minute)}, time.Minute)
	must(t, err)
	wantEqual(t, "buckets", got, []UsageBucket{
		bucket(0, 1, "a", 1, 0, 7*ms, 7*ms),
		bucket(0, 1, "m", 100, 10, 50*ms, 99*ms),
		bucket(0, 2, "m", 3, 0, 20*ms, 30*ms),
		bucket(time.Minute, 1, "m", 1, 0, 5*ms, 5*ms),
	})

	// Buckets start at multiples of the width, wherever From is.
	got, err = f.s.UsageBuckets(f.ctx, UsageFilter{KeyIDs: []int64{1}, Model: "m", From: at(-time.Hour)}, time.Minute)
	must(t, err)
	var starts []time.Time
	for _, b := range got {
		starts = append(starts, b.Start)
	}
	wantEqual(t, "bucket starts", starts, []time.Time{at(-time.Minute), at(0), at(time.Minute), at(2 * time.Minute)})

	// By endpoint: key 2's requests split in three, the speech ones with
	// their units summed; the rest had no endpoint. Filtered by endpoint,
	// only its own.
	must(t, f.s.AddUsage(f.ctx, []Usage{
		{Time: at(time.Second), KeyID: 2, Model: "m", Endpoint: "embeddings", Latency: 40 * ms, Input: 1},
		{Time: at(2 * time.Second), KeyID: 2, Model: "m", Endpoint: "embeddings", Latency: 4 * ms, Input: 2},
		{Time: at(3 * time.Second), KeyID: 2, Model: "m", Endpoint: "audio.speech", Latency: ms, Units: 5, Unit: UnitCharacters},
		{Time: at(4 * time.Second), KeyID: 2, Model: "m", Endpoint: "audio.speech", Latency: ms, Status: 500},
		{Time: at(5 * time.Second), KeyID: 2, Model: "m", Endpoint: "audio.speech", Latency: ms, Units: 7, Unit: UnitCharacters},
	}))
	got, err = f.s.UsageBuckets(f.ctx, UsageFilter{KeyIDs: []int64{2}, From: at(0), To: at(time.Minute), ByEndpoint: true}, time.Minute)
	must(t, err)
	embeddings := UsageBucket{Start: at(0), KeyID: 2, Model: "m", Endpoint: "embeddings", Requests: 2, Input: 3,
		LatencyP50: 4 * ms, LatencyP99: 40 * ms}
	speech := UsageBucket{Start: at(0), KeyID: 2, Model: "m", Endpoint: "audio.speech", Requests: 3, Errors: 1,
		Units: map[string]int64{UnitCharacters: 12}, LatencyP50: ms, LatencyP99: ms}
	wantEqual(t, "buckets by endpoint", got, []UsageBucket{bucket(0, 2, "m", 3, 0, 20*ms, 30*ms), speech, embeddings})
	got, err = f.s.UsageBuckets(f.ctx, UsageFilter{Endpoint: "embeddings", ByEndpoint: true}, time.Minute)
	must(t, err)
	wantEqual(t, "buckets of one endpoint", got, []UsageBucket{embeddings})
	got, err = f.s.UsageBuckets(f.ctx, UsageFilter{KeyIDs: []int64{2}, From: at(0), To: at(time.Minute)}, time.Minute)
	must(t, err)
	wantEqual(t, "buckets not by endpoint", got, []UsageBucket{{Start: at(0), KeyID: 2, Model: "m", Requests: 8, Errors: 1,
		Input: 6, Output: 6, Cached: 9, Reasoning: 12, Units: map[string]int64{UnitCharacters: 12},
		LatencyP50: 4 * ms, LatencyP99: 40 * ms}})

	got, err = f.s.UsageBuckets(f.ctx, UsageFilter{Model: "none"}, time.Minute)
	if err != nil || len(got) != 0 {
		t.Fatalf("buckets of no rows: %v, %v", got, err)
	}
	if _, err := f.s.UsageBuckets(f.ctx, UsageFilter{}, 0); err == nil {
		t.Fatal("a zero width is accepted")
	}
}

func testSpend(t *testing.T, f *fixture) {
	must(t, f.s.AddUsage(f.ctx, []Usage{
		{Time: at(0), KeyID: 1, Input: 1, Output: 10},
		{Time: at(1), KeyID: 1, Input: 2, Output: 20},
		{Time: at(2), KeyID: 1, Input: 3, Output: 30, Status: 500},
		{Time: at(3), KeyID: 2, Input: 5, Output: 50},
	}))
	got, err := f.s.Spend(f.ctx, []int64{1, 3})
	must(t, err)
	wantEqual(t, "Spend of keys 1 and 3", got, map[int64]Spend{1: {Requests: 3, Input: 6, Output: 60}, 3: {}})
	got, err = f.s.Spend(f.ctx, nil)
	must(t, err)
	wantEqual(t, "Spend of every key", got, map[int64]Spend{1: {Requests: 3, Input: 6, Output: 60},
		2: {Requests: 1, Input: 5, Output: 50}})
}

func TestUsageLimit(t *testing.T) {
	for in, want := range map[int]int{0: 100, -1: 100, 1: 1, 9999: 9999, 10_000: 10_000, 10_001: 10_000, 1 << 40: 10_000} {
		if got := usageLimit(in); got != want {
			t.Errorf("usageLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func testDeleteUsageBefore(t *testing.T, f *fixture) {
	// More old rows than one DELETE takes, so the batching is exercised,
	// then the 30 rows of usageRows from at(0) on.
	old := make([]Usage, pruneBatch+7)
	for i := range old {
		old[i] = Usage{Time: at(-time.Hour + time.Duration(i)*time.Millisecond), KeyID: 1, KeyName: "k1", RequestID: "old",
			Units: int64(i % 2)}
	}
	must(t, f.s.AddUsage(f.ctx, old))
	must(t, f.s.AddUsage(f.ctx, usageRows()))

	n, err := f.s.DeleteUsageBefore(f.ctx, at(10*time.Minute))
	must(t, err)
	if want := int64(len(old) + 10); n != want {
		t.Fatalf("DeleteUsageBefore deleted %d rows, want %d", n, want)
	}
	rows, err := f.s.Usage(f.ctx, UsageFilter{Limit: 1000})
	must(t, err)
	if len(rows) != 20 || rows[len(rows)-1].Time != at(10*time.Minute) {
		t.Fatalf("%d rows left, oldest %v; want 20 from %v on", len(rows), rows[len(rows)-1].Time, at(10*time.Minute))
	}
	// The units of the rows deleted went with them: 7 rows left have some.
	if n := f.count(t, `SELECT COUNT(*) FROM usage_units`); n != 7 {
		t.Fatalf("%d rows of usage_units left, want 7", n)
	}
	n, err = f.s.DeleteUsageBefore(f.ctx, at(10*time.Minute))
	must(t, err)
	if n != 0 {
		t.Fatalf("a second DeleteUsageBefore deleted %d rows", n)
	}
}

func TestPruneUsage(t *testing.T) {
	f := newFixture(t, backends[0])
	now := time.Now()
	must(t, f.s.AddUsage(f.ctx, []Usage{
		{Time: now.Add(-48 * time.Hour), RequestID: "old"},
		{Time: now.Add(-time.Hour), RequestID: "recent"},
	}))
	ctx, cancel := context.WithCancel(f.ctx)
	reports := make(chan int64, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		PruneUsage(ctx, f.s, 24*time.Hour, 10*time.Millisecond, func(n int64, err error) {
			if err != nil {
				t.Errorf("PruneUsage: %v", err)
			}
			reports <- n
		})
	}()
	if n := <-reports; n != 1 {
		t.Fatalf("the first pass deleted %d rows, want 1", n)
	}
	must(t, f.s.AddUsage(f.ctx, []Usage{{Time: now.Add(-25 * time.Hour), RequestID: "late"}}))
	if n := <-reports; n != 1 {
		t.Fatalf("a later pass deleted %d rows, want 1", n)
	}
	cancel()
	<-done
	rows, err := f.s.Usage(f.ctx, UsageFilter{})
	must(t, err)
	if got := requestIDs(rows); !slices.Equal(got, []string{"recent"}) {
		t.Fatalf("rows left: %v", got)
	}
}

// testAddUsageTouchesKeys: AddUsage moves each key's LastUsed to its
// latest row, over minutes, and never back.
func testAddUsageTouchesKeys(t *testing.T, f *fixture) {
	u := f.user(t, "ann")
	a, b := f.key(t, u.ID, "a"), f.key(t, u.ID, "b")
	check := func(when string, wantA, wantB time.Time) {
		t.Helper()
		for _, c := range []struct {
			k    *Key
			want time.Time
		}{{a, wantA}, {b, wantB}} {
			got, err := f.s.Key(f.ctx, c.k.ID)
			must(t, err)
			wantEqual(t, when+": LastUsed of "+c.k.Name, got.LastUsed, c.want)
		}
	}
	must(t, f.s.AddUsage(f.ctx, []Usage{
		{Time: at(2 * time.Minute), KeyID: a.ID}, {Time: at(5 * time.Minute), KeyID: a.ID}, {Time: at(time.Minute), KeyID: a.ID},
		{Time: at(3 * time.Second), KeyID: b.ID}, {Time: at(time.Hour), KeyID: 0}, {Time: at(time.Hour), KeyID: b.ID + 100},
	}))
	check("first batch", at(5*time.Minute), at(3*time.Second))
	must(t, f.s.AddUsage(f.ctx, []Usage{{Time: at(time.Minute), KeyID: a.ID}, {Time: at(time.Hour), KeyID: b.ID}}))
	check("second batch", at(5*time.Minute), at(time.Hour))
}
