package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// runQueueWait returns how long this process's threads have been runnable
// but waiting for a CPU, summed over its threads (the second field of
// /proc/self/task/*/schedstat). It grows when other processes hold the
// cores: a run that waited long did not measure the code, but the machine.
func runQueueWait() time.Duration {
	paths, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var total time.Duration
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// ioCalls returns the read and write system calls this process has made
// (syscr and syscw of /proc/self/io: read, recv, write, send and their
// kin; not epoll or futex).
func ioCalls() (reads, writes int64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(": "))
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(string(v), 10, 64)
		switch string(k) {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}
