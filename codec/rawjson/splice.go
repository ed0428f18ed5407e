package rawjson

// AppendReplaced appends the JSON object b with the value of its top-level
// key replaced by the string value; b as it is when it has no such key or
// cannot be read.
func AppendReplaced(dst, b []byte, key, value string) []byte {
	f := [...]Field{{Key: key}}
	if Lookup(b, f[:], false) != nil || f[0].Start < 0 {
		return append(dst, b...)
	}
	dst = append(dst, b[:f[0].Start]...)
	dst = AppendString(dst, value)
	return append(dst, b[f[0].End:]...)
}

// StringSpan is the span of the string value f found in b, between its
// quotes; -1, -1 when f is absent, not a string, or written with escapes.
func StringSpan(b []byte, f Field) (start, end int) {
	if f.Start < 0 || f.End-f.Start < 2 || b[f.Start] != '"' {
		return -1, -1
	}
	for _, c := range b[f.Start+1 : f.End-1] {
		if c == '\\' {
			return -1, -1
		}
	}
	return f.Start + 1, f.End - 1
}
