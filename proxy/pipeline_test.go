package proxy

import "testing"

// TestForwardStateRelease: a state handed back holds no channel, whether
// its request had one candidate, several, or the most a route gives.
func TestForwardStateRelease(t *testing.T) {
	ch := &channel{name: "c"}
	for _, n := range []int{0, 1, 3, maxCandidates} {
		st := takeForwardState()
		cands := st.cands[:0]
		for range n {
			cands = append(cands, candidate{ch, "m"})
		}
		st.release()
		if st.cands != (candList{}) {
			t.Errorf("%d candidates: the released list still holds %v", n, st.cands)
		}
	}
}

// BenchmarkForwardState is a request's state taken, one candidate
// appended, and handed back.
func BenchmarkForwardState(b *testing.B) {
	ch := &channel{name: "c"}
	b.ReportAllocs()
	for b.Loop() {
		st := takeForwardState()
		_ = append(st.cands[:0], candidate{ch, "m"})
		st.release()
	}
}
