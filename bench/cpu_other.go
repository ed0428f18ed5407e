//go:build !linux

package main

import "time"

// runQueueWait is not measured on this system.
func runQueueWait() time.Duration { return 0 }

// ioCalls is not measured on this system.
func ioCalls() (reads, writes int64) { return 0, 0 }
