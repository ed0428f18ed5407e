package rawjson

import "unsafe"

// UnsafeString returns a string that shares b's memory, without copying: b
// must not change while the string is in use.
func UnsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// UnsafeBytes returns the bytes of s without copying; they must not be
// modified.
func UnsafeBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
