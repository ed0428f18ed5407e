package proxy

import (
	"math/rand/v2"
	"testing"
)

// TestIDTable: the table holds what a map given the same entries and
// leaves holds, through growth and removals that move entries back,
// with keys crowded into few home slots so that probes run long and wrap.
func TestIDTable(t *testing.T) {
	f := func(name string, keyOf func(r *rand.Rand) idKey) {
		t.Helper()
		var tab idTable
		want := map[idKey]waiter{}
		r := rand.New(rand.NewPCG(1, 2))
		check := func(step int) {
			if tab.used != len(want) {
				t.Fatalf("%s, step %d: %d entries, want %d", name, step, tab.used, len(want))
			}
			for k, e := range want {
				if got := tab.get(k); got != e {
					t.Fatalf("%s, step %d: key %x holds %+v, want %+v", name, step, k, got, e)
				}
			}
			n := 0
			tab.all(func(k idKey, e waiter) {
				n++
				if want[k] != e {
					t.Fatalf("%s, step %d: all gives key %x with %+v, want %+v", name, step, k, e, want[k])
				}
			})
			if n != len(want) {
				t.Fatalf("%s, step %d: all gives %d entries, want %d", name, step, n, len(want))
			}
		}
		for step := range 5000 {
			k := keyOf(r)
			if r.IntN(3) == 0 {
				e := want[k]
				if got := tab.leave(k); got != e {
					t.Fatalf("%s, step %d: leave of key %x gives %+v, want %+v", name, step, k, got, e)
				}
				if e.n > 1 {
					want[k] = waiter{n: e.n - 1}
				} else {
					delete(want, k)
				}
			} else {
				e := waiter{n: 1 + r.IntN(3)}
				tab.entry(k).e = e
				want[k] = e
			}
			if step%97 == 0 {
				check(step)
			}
			if got := tab.get(k); got != want[k] {
				t.Fatalf("%s, step %d: key %x holds %+v, want %+v", name, step, k, got, want[k])
			}
		}
		check(5000)
	}
	f("random keys", func(r *rand.Rand) idKey { return idKey(r.Uint64N(300)) * 0x9e3779b97f4a7c15 })
	f("few home slots", func(r *rand.Rand) idKey { return idKey(r.Uint64N(200)<<32 | r.Uint64N(4)) })
	f("around the wrap", func(r *rand.Rand) idKey { return idKey(r.Uint64N(100)<<32 | (0xffffffff - r.Uint64N(4))) })
}

// TestIDTableGrowsForNewKeys: a table a quarter full grows for a new key,
// not for one it holds (a second request sharing a waiting one's id).
func TestIDTableGrowsForNewKeys(t *testing.T) {
	var tab idTable
	for k := range idKey(minIDSlots / 4) {
		tab.entry(k).e = waiter{n: 1}
	}
	tab.entry(0).e.n++
	if len(tab.slots) != minIDSlots {
		t.Errorf("a key held grew the table to %d slots, want %d", len(tab.slots), minIDSlots)
	}
	tab.entry(minIDSlots).e = waiter{n: 1}
	if len(tab.slots) != 2*minIDSlots {
		t.Errorf("a new key past a quarter full left %d slots, want %d", len(tab.slots), 2*minIDSlots)
	}
	if tab.get(0).n != 2 || tab.get(minIDSlots).n != 1 || tab.used != minIDSlots/4+1 {
		t.Errorf("entries after growth: %+v, %+v, %d used", tab.get(0), tab.get(minIDSlots), tab.used)
	}
}
