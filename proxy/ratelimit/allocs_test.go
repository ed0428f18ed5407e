//go:build !race

package ratelimit

import "testing"

func TestAdmitDoesNotAllocate(t *testing.T) {
	l := New(nil)
	s := l.State("key")
	lim := Limits{RPM: 1 << 40, TPM: 1 << 50}
	if n := testing.AllocsPerRun(1000, func() { l.Settle(s, 10, 10); l.Admit(s, lim, 10) }); n != 0 {
		t.Fatalf("Admit+Settle allocate %v times", n)
	}
}
