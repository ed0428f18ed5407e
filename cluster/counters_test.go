package cluster

import (
	"math/rand/v2"
	"testing"
	"time"
)

// update is one count a source reports.
type update struct {
	src      uint64
	w        int64
	id       uint64
	req, tok int64
}

// fixedClock is a counters clock at the start of window 1000 of a minute.
func fixedClock() time.Time { return time.UnixMilli(1000 * 60_000) }

func newTestCounters() *counters { return newCounters(1, time.Minute, fixedClock) }

// sums reads what admission would read of the limits 1..3 in windows 999
// and 1000.
func sums(cs *counters) [3][2][2]int64 {
	var out [3][2][2]int64
	for id := range 3 {
		c := cs.track(uint64(id + 1))
		for i, w := range []int64{999, 1000} {
			out[id][i][0], out[id][i][1] = c.Others(w)
		}
	}
	return out
}

// randomUpdates are counts of 3 sources on 3 limits in 2 windows, each
// source's grow-only: later updates never report less.
func randomUpdates(r *rand.Rand, n int) []update {
	type k struct {
		src, id uint64
		w       int64
	}
	cur := map[k][2]int64{}
	var out []update
	for range n {
		key := k{uint64(r.IntN(3) + 2), uint64(r.IntN(3) + 1), 999 + int64(r.IntN(2))}
		c := cur[key]
		c[0] += int64(r.IntN(3))
		c[1] += int64(r.IntN(100))
		cur[key] = c
		out = append(out, update{key.src, key.w, key.id, c[0], c[1]})
	}
	return out
}

func apply(tb testing.TB, cs *counters, us []update) {
	for _, u := range us {
		mergeCount(tb, cs, u.src, "n", u.w, u.id, u.req, u.tok)
	}
}

// mergeCount merges one count of source src as the node does any count:
// in a counts message, through apply.
func mergeCount(tb testing.TB, cs *counters, src uint64, node string, w int64, id uint64, req, tok int64) {
	tb.Helper()
	p := &packer{windowMs: cs.windowMs, src: src, node: node, out: func(msg []byte) {
		if err := cs.apply(msg); err != nil {
			tb.Fatalf("apply: %v", err)
		}
	}}
	p.add(w, id, req, tok)
	p.end()
}

// The merge is a join: any order (commutative), any grouping
// (associative: a state merged into another whole), any repetition
// (idempotent) of the same updates gives the same sums, those of the
// newest value of each source.
func TestMergeOrderGroupingRepetition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		us := randomUpdates(r, 40)
		want := newTestCounters()
		apply(t, want, us)

		shuffled := append([]update(nil), us...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		twice := append(append([]update(nil), shuffled...), us...)
		got := newTestCounters()
		apply(t, got, twice)
		if sums(got) != sums(want) {
			t.Fatalf("round %d: shuffled and repeated %v, want %v", round, sums(got), sums(want))
		}

		// Grouping: half merged into a, half into b, then b's state into a.
		a, b := newTestCounters(), newTestCounters()
		apply(t, a, shuffled[:20])
		apply(t, b, shuffled[20:])
		b.eachSource(1000, func(src uint64, node string, w int64, id uint64, req, tok int64) {
			mergeCount(t, a, src, node, w, id, req, tok)
		})
		if sums(a) != sums(want) {
			t.Fatalf("round %d: merged in two groups %v, want %v", round, sums(a), sums(want))
		}
	}
}

// Within a window a sum never decreases, whatever arrives; a stale value
// (lower than one heard) changes nothing.
func TestMergeNeverDecreases(t *testing.T) {
	cs := newTestCounters()
	c := cs.track(7)
	var last int64
	for _, v := range []int64{5, 3, 9, 9, 1, 12, 0} {
		mergeCount(t, cs, 2, "b", 1000, 7, v, v*10)
		req, tok := c.Others(1000)
		if req < last || tok != req*10 {
			t.Fatalf("after %d: %d requests, %d tokens; was %d", v, req, tok, last)
		}
		last = req
	}
	if last != 12 {
		t.Fatalf("sum %d, want the largest value heard, 12", last)
	}
	// Two sources add up; this node's own source is never counted here.
	mergeCount(t, cs, 3, "c", 1000, 7, 4, 0)
	mergeCount(t, cs, 1, "self", 1000, 7, 100, 0)
	if req, _ := c.Others(1000); req != 16 {
		t.Fatalf("sum %d, want 12 + 4", req)
	}
}

// A window's slot is reused two windows later: the old counts are gone,
// and counts older than the previous window are ignored.
func TestWindowsRoll(t *testing.T) {
	now := fixedClock()
	cs := newCounters(1, time.Minute, func() time.Time { return now })
	c := cs.track(1)
	mergeCount(t, cs, 2, "b", 1000, 1, 10, 0)
	now = now.Add(2 * time.Minute)
	mergeCount(t, cs, 2, "b", 1002, 1, 3, 0)
	mergeCount(t, cs, 2, "b", 1000, 1, 50, 0) // too old now
	if r, _ := c.Others(1002); r != 3 {
		t.Fatalf("window 1002: %d, want 3", r)
	}
	if r, _ := c.Others(1000); r != 0 {
		t.Fatalf("window 1000 read after the roll: %d, want 0", r)
	}
	cs.sweep()
	if len(cs.sources[2].counts) != 1 {
		t.Fatalf("sweep kept %d limits of source 2, want 1", len(cs.sources[2].counts))
	}
}

// Counts go through the wire as they were, split into packets that fit.
func TestPackerRoundTrip(t *testing.T) {
	var msgs [][]byte
	p := &packer{windowMs: 60_000, src: 42, node: "gw-1", limit: maxPacket,
		out: func(b []byte) { msgs = append(msgs, append([]byte(nil), b...)) }}
	for id := range uint64(300) {
		p.add(999, id, int64(id), int64(id)*1000)
		p.add(1000, id, 1, 1<<39)
	}
	p.end()
	got := map[[2]int64][2]int64{}
	for _, m := range msgs {
		if len(m) > maxPacket {
			t.Fatalf("message of %d bytes, over %d", len(m), maxPacket)
		}
		err := decodeCounts(m, 60_000, func(src uint64, node []byte, w int64, id uint64, req, tok int64) {
			if src != 42 || string(node) != "gw-1" {
				t.Fatalf("source %d %q", src, node)
			}
			got[[2]int64{w, int64(id)}] = [2]int64{req, tok}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 600 || got[[2]int64{999, 299}] != [2]int64{299, 299000} || got[[2]int64{1000, 5}] != [2]int64{1, 1 << 39} {
		t.Fatalf("%d counts decoded, e.g. %v", len(got), got[[2]int64{999, 299}])
	}
	if err := decodeCounts(msgs[0], 6_000, func(uint64, []byte, int64, uint64, int64, int64) {}); err == nil {
		t.Fatal("a message of another window length was read")
	}
	for i := range len(msgs[0]) - 1 {
		if err := decodeCounts(msgs[0][:i], 60_000, func(uint64, []byte, int64, uint64, int64, int64) {}); err == nil {
			t.Fatalf("a message cut at %d bytes was read without error", i)
		}
	}
}

func TestParseSecretKey(t *testing.T) {
	f := func(in string, want int) {
		t.Helper()
		k, err := ParseSecretKey(in)
		if len(k) != want || (want == 0) != (err != nil) {
			t.Fatalf("%q: %d bytes, %v; want %d", in, len(k), err, want)
		}
	}
	f("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", 32)
	f("0123456789abcdef", 16)
	f("0123456789abcdef01234567", 24)
	f("short", 0)
	f("", 0)
}
