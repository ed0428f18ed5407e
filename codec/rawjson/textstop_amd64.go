//go:build !purego

package rawjson

import "golang.org/x/sys/cpu"

// TextStopVector reports whether TextStop looks at 32 bytes an
// instruction (the CPU has AVX2); when false, TextStop returns 0 and its
// caller searches on its own. Read-only (tests set it).
var TextStopVector = cpu.X86.HasAVX2

// TextStop returns the offset in b of the first byte from which a JSON
// string's plain run needs a closer look: a quote, a backslash, a control
// character, or a byte above 0x7f that does not begin a valid UTF-8
// sequence (of two, three or four bytes). It looks at
// 32 bytes at a time, steps over the valid sequences it meets, and stops
// where fewer than 32 bytes are left (len(b) when none are). Only when
// TextStopVector.
func TextStop(b []byte) int {
	if !TextStopVector {
		return 0 // no AVX2: the routine's instructions would fault
	}
	return textStopAVX2(b)
}

// textStopAVX2 is in stops_amd64.s.
//
//go:noescape
func textStopAVX2(b []byte) int
