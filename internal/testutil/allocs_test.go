//go:build !race

// The race detector allocates on its own, so this test only runs without it.

package testutil_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// fakeTB records what a check reports.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }

func TestAllocs(t *testing.T) {
	var sink []byte
	for _, c := range []struct {
		budget float64
		fn     func()
		fail   bool
	}{
		{0, func() {}, false},
		{0, func() { sink = make([]byte, 64<<10) }, true},
		{1, func() { sink = make([]byte, 64<<10) }, false},
	} {
		tb := &fakeTB{TB: t}
		testutil.Allocs(tb, "fn", c.budget, c.fn)
		if tb.failed != c.fail {
			t.Errorf("budget %v: failed %v, want %v", c.budget, tb.failed, c.fail)
		}
	}
	_ = sink
}
