package proxy

// idTable is the waiting registry's table of waiters by idKey (see
// clientgone.go): open addressing with linear probing over a power-of-two
// number of slots, at most a quarter of them used (short probes), an entry removed by moving
// back the ones after it (no tombstones). A request registers and leaves
// in a probe or two; Go's map spent about four times as long on each
// (its hashing, group metadata and writes), for keys that are hashes
// already. An entry's n is at least 1: a slot with n 0 is free.
type idTable struct {
	slots []idSlot
	used  int
}

type idSlot struct {
	k idKey
	e waiter
}

// minIDSlots is a new table's size.
const minIDSlots = 64

// find returns the index of k's slot, or of the free one ending its probe.
func (t *idTable) find(k idKey) uint64 {
	mask := uint64(len(t.slots) - 1)
	for i := uint64(k) & mask; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.e.n == 0 || s.k == k {
			return i
		}
	}
}

// get returns k's waiter, the zero one when k has none.
func (t *idTable) get(k idKey) waiter {
	if t.used == 0 {
		return waiter{}
	}
	return t.slots[t.find(k)].e
}

// entry returns k's slot, a new one (its n 0) when k has none. Only a new
// key grows the table, which a quarter full would pass; k is looked up
// again only then.
func (t *idTable) entry(k idKey) *idSlot {
	if len(t.slots) == 0 {
		t.grow()
	}
	i := t.find(k)
	if t.slots[i].e.n == 0 && 4*(t.used+1) > len(t.slots) {
		t.grow()
		i = t.find(k)
	}
	s := &t.slots[i]
	if s.e.n == 0 {
		s.k = k
		t.used++
	}
	return s
}

// grow doubles the slots (or makes the first ones) and places the
// entries again.
func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, max(2*len(old), minIDSlots))
	for _, s := range old {
		if s.e.n > 0 {
			t.slots[t.find(s.k)] = s
		}
	}
}

// leave counts one request less under k, and removes k's entry when it
// was the last; it returns the entry as it was (n 0: k had none).
func (t *idTable) leave(k idKey) waiter {
	if t.used == 0 {
		return waiter{}
	}
	i := t.find(k)
	e := t.slots[i].e
	switch {
	case e.n > 1:
		t.slots[i].e = waiter{n: e.n - 1} // shared until none is left
	case e.n == 1:
		t.removeAt(i)
	}
	return e
}

// removeAt frees slot i. The entries of the probe after it that could
// not be found past a freed slot are moved back into it, in turn.
func (t *idTable) removeAt(i uint64) {
	t.used--
	mask := uint64(len(t.slots) - 1)
	for j := i; ; {
		j = (j + 1) & mask
		s := t.slots[j]
		if s.e.n == 0 {
			t.slots[i] = idSlot{}
			return
		}
		// s may move to i unless its home slot lies after i, up to j
		// (cyclically): it would then be found no more.
		if home := uint64(s.k) & mask; (j-home)&mask < (j-i)&mask {
			continue
		}
		t.slots[i] = s
		i = j
	}
}

// all calls f with every entry.
func (t *idTable) all(f func(k idKey, e waiter)) {
	for _, s := range t.slots {
		if s.e.n > 0 {
			f(s.k, s.e)
		}
	}
}
