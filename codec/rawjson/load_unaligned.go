//go:build (amd64 || arm64) && !purego

package rawjson

import "unsafe"

// word returns the 8 bytes of b at i as a little-endian number, for a
// caller that has checked i+8 <= len(b): one load, where
// binary.LittleEndian.Uint64(b[i:]) checks the bounds again and masks the
// slice's pointer (ten instructions or so, at every string and separator
// validValue reads). These architectures load unaligned words, and are
// little-endian.
func word(b []byte, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// pair is word for the 2 bytes of b at i (i+2 <= len(b)).
func pair(b []byte, i int) uint16 {
	return *(*uint16)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// quad is word for the 4 bytes of b at i (i+4 <= len(b)).
func quad(b []byte, i int) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}
