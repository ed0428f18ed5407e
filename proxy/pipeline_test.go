package proxy

import "testing"

// TestCandListRelease: a list handed back holds no channel, whether its
// request had one candidate, several, or the most a route gives.
func TestCandListRelease(t *testing.T) {
	ch := &channel{name: "c"}
	for _, n := range []int{0, 1, 3, maxCandidates} {
		cl := takeCandList()
		cands := cl[:0]
		for range n {
			cands = append(cands, candidate{ch, "m"})
		}
		cl.release()
		if *cl != (candList{}) {
			t.Errorf("%d candidates: the released list still holds %v", n, *cl)
		}
	}
}

// BenchmarkCandList is a request's list taken, one candidate appended, and
// handed back.
func BenchmarkCandList(b *testing.B) {
	ch := &channel{name: "c"}
	b.ReportAllocs()
	for b.Loop() {
		cl := takeCandList()
		_ = append(cl[:0], candidate{ch, "m"})
		cl.release()
	}
}
