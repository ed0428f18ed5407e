//go:build !unix

// Package proctime reads the CPU time the process has used, for the
// benchmarks and the load harness.
package proctime

import "time"

// CPU is not measured on this system: it returns 0.
func CPU() time.Duration { return 0 }
