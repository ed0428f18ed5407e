package store

// The usage log finds the rows of a time range or of keys through
// usage_minutes, not through indexes. These tests check the queries return
// exactly the rows a plain filter over every row returns: across batches
// and minutes, with rows written out of time order (a long request is
// recorded when it ends, its time is when it began), after retention has
// deleted part of a minute, and after migration 0003 moved old rows. The
// units of the rows that have some are summed alike, by usage_minute_units.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// spreadRows are n rows over keys 0 to 3 and about ten minutes, in the
// order a gateway would record them: each begins up to three minutes
// before it is recorded.
func spreadRows(n int) []Usage {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]Usage, n)
	for i := range rows {
		recorded := time.Duration(i) * 10 * time.Minute / time.Duration(n)
		key := int64(r.IntN(4))
		rows[i] = Usage{Time: at(recorded - time.Duration(r.Int64N(int64(3*time.Minute)))), KeyID: key,
			KeyName: fmt.Sprint("k", key), Model: []string{"m-a", "m-b"}[r.IntN(2)], Channel: "ch", Status: []int{200, 200, 429}[r.IntN(3)],
			Input: r.Int64N(1000), Output: r.Int64N(100), Latency: time.Duration(r.Int64N(1e9)), RequestID: fmt.Sprint(i),
			ClientStyle: "openai"}
	}
	return rows
}

// withUnits gives every third row units, in one of two units.
func withUnits(rows []Usage) []Usage {
	for i := range rows {
		if i%3 == 0 {
			rows[i].Units, rows[i].Unit = int64(1+i%7), []string{UnitSeconds, UnitImages}[i/3%2]
		}
	}
	return rows
}

// addInBatches writes rows in AddUsage calls of varied sizes.
func addInBatches(t *testing.T, f *fixture, rows []Usage) {
	for i, size := 0, 1; i < len(rows); i, size = i+size, size*3%97+1 {
		must(t, f.s.AddUsage(f.ctx, rows[i:min(i+size, len(rows))]))
	}
}

// rangeFilters are filters by time (on and off minute boundaries), by
// keys, and both, over spreadRows.
func rangeFilters() []UsageFilter {
	var fs []UsageFilter
	for _, keys := range [][]int64{nil, {0}, {2}, {1, 3}, {9}} {
		fs = append(fs,
			UsageFilter{KeyIDs: keys},
			UsageFilter{KeyIDs: keys, From: at(4 * time.Minute)},
			UsageFilter{KeyIDs: keys, To: at(4*time.Minute + 30*time.Second)},
			UsageFilter{KeyIDs: keys, From: at(2*time.Minute + time.Nanosecond), To: at(5*time.Minute - time.Second)},
			UsageFilter{KeyIDs: keys, From: at(-time.Hour), To: at(-time.Minute)},
			UsageFilter{KeyIDs: keys, From: at(3 * time.Minute), Model: "m-b", Status: 429})
	}
	return fs
}

// keep is what the filter selects, in Go.
func keep(f UsageFilter, u *Usage) bool {
	return (f.From.IsZero() || !u.Time.Before(f.From)) && (f.To.IsZero() || u.Time.Before(f.To)) &&
		(len(f.KeyIDs) == 0 || slices.Contains(f.KeyIDs, u.KeyID)) && (f.Model == "" || u.Model == f.Model) &&
		(f.Status == 0 || u.Status == f.Status)
}

// checkRanges checks Usage, UsageBuckets and Spend against rows, the rows
// the store holds in the order they were written.
func checkRanges(t *testing.T, f *fixture, rows []Usage) {
	t.Helper()
	for _, filter := range rangeFilters() {
		var want []string // newest first: ids follow the order of writing
		for i := len(rows) - 1; i >= 0; i-- {
			if keep(filter, &rows[i]) {
				want = append(want, rows[i].RequestID)
			}
		}
		filter.Limit = 10000
		got, err := f.s.Usage(f.ctx, filter)
		must(t, err)
		var ids []string
		for _, u := range got {
			ids = append(ids, u.RequestID)
		}
		wantEqual(t, fmt.Sprintf("Usage(%+v)", filter), ids, want)
		checkBuckets(t, f, filter, rows)
	}
	checkSpend(t, f, rows)
}

// checkBuckets checks UsageBuckets of 90-second buckets, not aligned with
// the minutes of usage_minutes, against a sum over rows.
func checkBuckets(t *testing.T, f *fixture, filter UsageFilter, rows []Usage) {
	t.Helper()
	const width = 90 * time.Second
	type group struct {
		start time.Time
		keyID int64
		model string
	}
	groups := map[group][]int64{} // latencies
	var want []UsageBucket
	for i := range rows {
		if u := &rows[i]; keep(filter, u) {
			g := group{fromNS(toNS(u.Time) - toNS(u.Time)%int64(width)), u.KeyID, u.Model}
			groups[g] = append(groups[g], int64(u.Latency))
		}
	}
	for g, lat := range groups {
		b := UsageBucket{Start: g.start, KeyID: g.keyID, Model: g.model}
		for i := range rows {
			u := &rows[i]
			if keep(filter, u) && u.KeyID == b.KeyID && u.Model == b.Model && fromNS(toNS(u.Time)-toNS(u.Time)%int64(width)).Equal(b.Start) {
				b.Requests++
				b.Input += u.Input
				b.Output += u.Output
				if u.Status >= 400 {
					b.Errors++
				}
				b.Units = addUnit(b.Units, u)
			}
		}
		slices.Sort(lat)
		b.LatencyP50, b.LatencyP99 = time.Duration(lat[rank(50, len(lat))]), time.Duration(lat[rank(99, len(lat))])
		want = append(want, b)
	}
	slices.SortFunc(want, func(a, b UsageBucket) int {
		if bucketLess(&a, &b) {
			return -1
		}
		return 1
	})
	filter.BeforeID = 2 // does not apply
	got, err := f.s.UsageBuckets(f.ctx, filter, width)
	must(t, err)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	wantEqual(t, fmt.Sprintf("UsageBuckets(%+v)", filter), got, want)
}

// addUnit adds u's units to m, made when needed.
func addUnit(m map[string]int64, u *Usage) map[string]int64 {
	if u.Units == 0 {
		return m
	}
	if m == nil {
		m = map[string]int64{}
	}
	m[u.Unit] += u.Units
	return m
}

func checkSpend(t *testing.T, f *fixture, rows []Usage) {
	t.Helper()
	asked := []int64{0, 1, 2, 3, 9}
	want := map[int64]Spend{}
	for i := range rows {
		u := &rows[i]
		s := want[u.KeyID]
		want[u.KeyID] = Spend{Requests: s.Requests + 1, Input: s.Input + u.Input, Output: s.Output + u.Output,
			Units: addUnit(s.Units, u)}
	}
	got, err := f.s.Spend(f.ctx, nil)
	must(t, err)
	wantEqual(t, "Spend of every key", got, want)
	for _, k := range asked {
		if _, ok := want[k]; !ok {
			want[k] = Spend{} // a key with no usage has zero totals
		}
	}
	got, err = f.s.Spend(f.ctx, asked)
	must(t, err)
	wantEqual(t, "Spend", got, want)
}

func testUsageRanges(t *testing.T, f *fixture) {
	rows := withUnits(spreadRows(600))
	addInBatches(t, f, rows)
	checkRanges(t, f, rows)

	// Retention in the middle of a minute, twice (the second deletes
	// nothing), then of everything.
	cut := at(3*time.Minute + 20*time.Second)
	var left []Usage
	for _, u := range rows {
		if !u.Time.Before(cut) {
			left = append(left, u)
		}
	}
	for _, want := range []int{len(rows) - len(left), 0} {
		n, err := f.s.DeleteUsageBefore(f.ctx, cut)
		must(t, err)
		if n != int64(want) {
			t.Fatalf("DeleteUsageBefore(%v) deleted %d rows, want %d", cut, n, want)
		}
	}
	checkRanges(t, f, left)
	// The unit entries of the minutes emptied are gone, those of the rows
	// left (the cut minute's too) kept.
	if n, want := f.count(t, `SELECT COUNT(*) FROM usage_minute_units`), len(minuteUnits(left)); n != want {
		t.Fatalf("%d entries in usage_minute_units after retention, want %d", n, want)
	}

	// Rows written after the deletion, in minutes it emptied and in
	// others, come back with the rest.
	more := withUnits(spreadRows(200))
	for i := range more {
		more[i].RequestID = "more" + more[i].RequestID
	}
	addInBatches(t, f, more)
	checkRanges(t, f, append(left, more...))

	n, err := f.s.DeleteUsageBefore(f.ctx, at(time.Hour))
	must(t, err)
	if n != int64(len(left)+len(more)) {
		t.Fatalf("deleting everything deleted %d rows, want %d", n, len(left)+len(more))
	}
	checkRanges(t, f, nil)
	for _, table := range []string{"usage_minutes", "usage_minute_units"} {
		if n := f.count(t, `SELECT COUNT(*) FROM `+table); n != 0 {
			t.Fatalf("%d rows left in %s with no usage", n, table)
		}
	}
}

// testUsageMigration writes rows into the schema of migrations 0001 and
// 0002 and then opens the store, which applies 0003: the rows read back as
// they were written, with their ids, and new rows follow them.
func testUsageMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 3)
	rows := spreadRows(300)
	for i := range rows {
		u := &rows[i]
		_, err := old.w.ExecContext(f.ctx, `INSERT INTO usage_log (`+usageCols0001+`) VALUES
			($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, toNS(u.Time), u.KeyID, u.KeyName, u.Model,
			u.Channel, u.Status, u.Input, u.Output, u.Cached, u.Reasoning, int64(u.Latency), int64(u.FirstToken),
			u.RequestID, u.ClientStyle)
		must(t, err)
	}
	g := reopen(t, f, old, dsn)
	checkRanges(t, g, rows)
	got, err := g.s.Usage(f.ctx, UsageFilter{Limit: 1, BeforeID: 2})
	must(t, err)
	want := rows[0]
	want.ID = 1
	wantEqual(t, "the first row", got, []Usage{want})

	more := spreadRows(100) // the same labels: usage_labels holds them once
	addInBatches(t, g, more)
	checkRanges(t, g, append(rows, more...))
	labels := map[usageLabel]bool{}
	for i := range rows {
		labels[labelOf(&rows[i])] = true
	}
	if n := g.count(t, `SELECT COUNT(*) FROM usage_labels`); n != len(labels) {
		t.Fatalf("%d labels, want %d", n, len(labels))
	}
}

// usageCols0001 are the columns of the table usage_log of migration 0001.
const usageCols0001 = `time_ns, key_id, key_name, model, channel, status, input_tokens, output_tokens,
	cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id, client_style`

// migratedBefore opens a new database of f's driver with only the
// migrations numbered below version applied, for a test to write rows in
// that schema; reopen then applies the others.
func migratedBefore(t *testing.T, f *fixture, version int) (old *sqlStore, dsn string) {
	t.Helper()
	dsn = f.newDSN(t)
	old = openUnmigrated(t, f.driver, dsn)
	list, err := migrations(f.driver)
	must(t, err)
	for _, m := range list {
		if m.version < version {
			must(t, old.applyMigration(f.ctx, m))
		}
	}
	return old, dsn
}

// reopen closes old and opens the store on its database, which applies
// the migrations old lacked, each recorded once.
func reopen(t *testing.T, f *fixture, old *sqlStore, dsn string) *fixture {
	t.Helper()
	must(t, old.Close())
	g := &fixture{backend: f.backend, dsn: dsn, secret: f.secret, ctx: f.ctx}
	g.s = g.open(t, Options{SecretKey: f.secret})
	list, err := migrations(f.driver)
	must(t, err)
	checkMigrations(t, g, list)
	return g
}

// openUnmigrated opens a store on dsn without applying the migrations.
func openUnmigrated(t *testing.T, driver, dsn string) *sqlStore {
	t.Helper()
	o := Options{}
	o.defaults()
	open := openSQLite
	if driver == "postgres" {
		open = openPostgres
	}
	s, err := open(t.Context(), dsn, o)
	must(t, err)
	return s
}

// testUsageSparseKey reads the rows of a key seldom used, in many ranges of
// ids (one per minute it was used in, too far apart to merge): every row
// comes, newest first, paged or not.
func testUsageSparseKey(t *testing.T, f *fixture) {
	const uses, every = 40, mergeGap + 44
	var rows []Usage
	var want []string
	for i := range uses * every {
		u := Usage{Time: at(time.Duration(i) * time.Minute / every), KeyID: 1, RequestID: fmt.Sprint(i)}
		if i%every == every/2 {
			u.KeyID = 2
			want = append([]string{u.RequestID}, want...)
		}
		rows = append(rows, u)
	}
	for i := 0; i < len(rows); i += 1000 {
		must(t, f.s.AddUsage(f.ctx, rows[i:min(i+1000, len(rows))]))
	}
	if ranges, err := f.s.(*sqlStore).usageRanges(f.ctx, UsageFilter{KeyIDs: []int64{2}}); err != nil || len(ranges) != uses {
		t.Fatalf("key 2 has %d ranges (%v), want %d", len(ranges), err, uses)
	}
	got, err := f.s.Usage(f.ctx, UsageFilter{KeyIDs: []int64{2}, Limit: 1000})
	must(t, err)
	wantEqual(t, "rows of key 2", requestIDsInOrder(got), want)

	var paged []string
	var before int64
	for {
		got, err := f.s.Usage(f.ctx, UsageFilter{KeyIDs: []int64{2}, Limit: 7, BeforeID: before, From: at(time.Minute)})
		must(t, err)
		if len(got) == 0 {
			break
		}
		paged, before = append(paged, requestIDsInOrder(got)...), got[len(got)-1].ID
	}
	wantEqual(t, "paged rows of key 2 from the second minute", paged, want[:len(want)-1])
}

func requestIDsInOrder(rows []Usage) []string {
	var ids []string
	for _, u := range rows {
		ids = append(ids, u.RequestID)
	}
	return ids
}
