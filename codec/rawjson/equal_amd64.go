//go:build !purego

package rawjson

import "golang.org/x/sys/cpu"

// vectorEqual: the CPU has AVX2, and Equal compares 64 bytes a turn. (A
// variable, so that tests turn it off.)
var vectorEqual = cpu.X86.HasAVX2

func equalVector(a, b []byte) bool { return equalAVX2(a, b) }

// equalAVX2 is in equal_amd64.s.
//
//go:noescape
func equalAVX2(a, b []byte) bool
