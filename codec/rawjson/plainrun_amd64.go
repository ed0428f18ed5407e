//go:build !purego

package rawjson

import "golang.org/x/sys/cpu"

// vectorRuns: the CPU has AVX2, and plainRun reads 32 bytes an instruction.
var vectorRuns = cpu.X86.HasAVX2

// plainRun returns the offset in b of its first quote, backslash or control
// character when one lies in b's whole 32-byte blocks, else where its last
// partial block begins (len(b) when there is none): what longString passes
// in one read of each byte, where it made three (a search for the quote,
// one for a backslash, a look at each word for control characters). Only
// when vectorRuns.
func plainRun(b []byte) int { return plainRunAVX2(b) }

// plainRunAVX2 is in stops_amd64.s.
//
//go:noescape
func plainRunAVX2(b []byte) int
