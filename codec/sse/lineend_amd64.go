//go:build !purego

package sse

import "golang.org/x/sys/cpu"

// vectorLineEnd: the CPU has AVX2, and lineEnd looks at 32 bytes an
// instruction for either line-ending byte. (A variable, so that tests turn
// it off.)
var vectorLineEnd = cpu.X86.HasAVX2

// lineEndVector is lineEnd for b of 32 bytes or more.
func lineEndVector(b []byte) int { return lineEndAVX2(b) }

// lineEndAVX2 is in lineend_amd64.s.
//
//go:noescape
func lineEndAVX2(b []byte) int
