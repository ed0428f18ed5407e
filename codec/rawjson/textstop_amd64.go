//go:build !purego

package rawjson

import "golang.org/x/sys/cpu"

// TextStopVector reports whether TextStop looks at 32 bytes an
// instruction (the CPU has AVX2); when false, TextStop returns 0 and its
// caller searches on its own. Read-only.
var TextStopVector = cpu.X86.HasAVX2

// TextStop returns the offset in b of the first byte EscapeMask flags (a
// quote, a backslash, a control character, a byte above 0x7f) when one
// lies in b's whole 32-byte blocks, else where its last partial block
// begins (len(b) when there is none): where a JSON string's plain ASCII
// run ends, in one read of each byte. Only when TextStopVector.
func TextStop(b []byte) int { return textStopAVX2(b) }

// textStopAVX2 is in textstop_amd64.s.
//
//go:noescape
func textStopAVX2(b []byte) int
