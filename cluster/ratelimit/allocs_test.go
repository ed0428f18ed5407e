//go:build !race

package ratelimit

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestAdmitDoesNotAllocate(t *testing.T) {
	l := New(nil, 0)
	s := l.State("key")
	lim := Limits{RPM: 1 << 40, TPM: 1 << 50}
	testutil.Allocs(t, "Admit+Settle", 0, func() { l.Settle(s, 10, 10); l.Admit(s, lim, 10) })
}
