//go:build unix

// Package proctime reads the CPU time the process has used, for the
// benchmarks and the load harness.
package proctime

import (
	"syscall"
	"time"
)

// CPU returns the CPU time, user and system, this process has used.
func CPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
