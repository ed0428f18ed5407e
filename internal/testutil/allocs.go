package testutil

import "testing"

// AllocRuns is how many times Allocs runs its function, after the one
// warm-up run that testing.AllocsPerRun makes. The count is an average over
// the runs, rounded down: fewer runs leave less room for an allocation made
// once.
const AllocRuns = 100

// Allocs checks that fn allocates at most budget times per run, on average
// over AllocRuns runs, and reports name with the count when it does more.
//
// The race detector allocates on its own, so the files that call Allocs
// build only without it (//go:build !race).
func Allocs(t testing.TB, name string, budget float64, fn func()) {
	t.Helper()
	AllocsN(t, AllocRuns, name, budget, fn)
}

// AllocsN is Allocs with another count of runs, for a function that takes
// long enough for the count to matter (a whole stream).
func AllocsN(t testing.TB, runs int, name string, budget float64, fn func()) {
	t.Helper()
	if n := testing.AllocsPerRun(runs, fn); n > budget {
		t.Errorf("%s: %v allocations, want at most %v", name, n, budget)
	}
}
