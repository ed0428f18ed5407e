package rawjson

// Word returns the 8 bytes of b at i as a little-endian number, for a
// caller that has checked i+8 <= len(b): one load where the platform
// allows unaligned ones (load_unaligned.go), for scanners outside this
// package that read a string a word at a time.
func Word(b []byte, i int) uint64 { return word(b, i) }
