//go:build purego || (!amd64 && !arm64)

package rawjson

import "encoding/binary"

// word returns the 8 bytes of b at i as a little-endian number (i+8 <=
// len(b)); see load_unaligned.go. The purego build uses these loads on
// every architecture, so that its tests (make test runs them) check every
// load's bounds, which the unsafe ones do not.
func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// pair is word for the 2 bytes of b at i (i+2 <= len(b)).
func pair(b []byte, i int) uint16 { return binary.LittleEndian.Uint16(b[i:]) }

// quad is word for the 4 bytes of b at i (i+4 <= len(b)).
func quad(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }
