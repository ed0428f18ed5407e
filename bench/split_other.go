//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"syscall"
)

// Split placement needs CPU affinity and /proc: Linux only.

var errSplitLinux = errors.New("-placement split needs Linux (CPU affinity and /proc)")

func allowedCPUs() ([]int, error)                   { return nil, errSplitLinux }
func prepareCmd(*exec.Cmd)                          {}
func startPinned(*exec.Cmd, int) error              { return errSplitLinux }
func pinSelf(int) (func() error, error)             { return nil, errSplitLinux }
func threadCPUs(int) ([]string, int, error)         { return nil, 0, errSplitLinux }
func childPids(int) []int                           { return nil }
func procTimesOf([]int) procTimes                   { return procTimes{} }
func coreTimesOf(int) coreTimes                     { return coreTimes{} }
func signalGroup(pid int, sig syscall.Signal) error { return errSplitLinux }
