//go:build !race

package cluster

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestAdmitWithFleetDoesNotAllocate(t *testing.T) {
	_, l, s := newBenchNode(t)
	lim := ratelimit.Limits{RPM: 1 << 40, TPM: 1 << 50}
	testutil.Allocs(t, "Admit+Settle with a fleet", 0, func() { l.Settle(s, 10, 10); l.Admit(s, lim, 10) })
	now := time.Now()
	testutil.Allocs(t, "AdmitAt+SettleAt with a fleet", 0, func() { l.SettleAt(s, 10, 10, now); l.AdmitAt(s, lim, 10, now) })
}
