package fuzz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedPaths returns the files matching the patterns, golden outputs
// (".out." files) left out unless a pattern names them. It fails when
// nothing matches: a fuzz target without its seeds would still pass.
func seedPaths(f *testing.F, patterns ...string) []string {
	f.Helper()
	var out []string
	for _, pattern := range patterns {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			if strings.Contains(filepath.Base(p), ".out.") && !strings.Contains(pattern, ".out.") {
				continue
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		f.Fatalf("no seeds in %q", patterns)
	}
	return out
}

// seedFiles adds every file seedPaths finds as a seed, whole.
func seedFiles(f *testing.F, patterns ...string) {
	f.Helper()
	for _, p := range seedPaths(f, patterns...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
