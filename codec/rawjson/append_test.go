package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	f := func(s string) {
		t.Helper()
		out := AppendString(nil, s)
		if !json.Valid(out) {
			t.Fatalf("AppendString(%q) = %s: not valid JSON", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		want := string([]rune(s)) // invalid UTF-8 becomes U+FFFD, as in encoding/json
		if back != want {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	}
	f("")
	f("plain")
	f(`quote " and backslash \`)
	f("new\nline\r\ttab\x00\x1f")
	f("unicode: héllo, 世界, 🙂")
	f("bad utf8: \xff\xfe end")
	f("</script>&")
}

// appendStringRef is the plain byte-by-byte form of AppendString, the
// reference for its eight-bytes-at-a-time fast path.
func appendStringRef(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r) // invalid UTF-8 ranges as U+FFFD
		}
	}
	return append(dst, '"')
}

// TestAppendStringFastPath: every kind of byte at every offset of the
// eight-byte words gives what the reference gives.
func TestAppendStringFastPath(t *testing.T) {
	f := func(s string) {
		t.Helper()
		if got, want := string(AppendString(nil, s)), string(appendStringRef(nil, s)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(AppendEscaped([]byte("x"), s)), "x"+string(AppendString(nil, s)[1:len(AppendString(nil, s))-1]); got != want {
			t.Errorf("AppendEscaped(%q) = %s, want %s", s, got, want)
		}
	}
	pieces := []string{"", "a", "plain ascii text ", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\U0001F600", "\xff", "\xe2\x82", "\u2028", "</script>"}
	for _, p := range pieces {
		for pad := range 17 {
			f(strings.Repeat("x", pad) + p)
			f(p + strings.Repeat("y", pad))
			f(strings.Repeat("z", pad) + p + strings.Repeat("w", 9) + p)
		}
	}
}

// FuzzAppendString holds AppendString to its byte-by-byte reference.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"plain", "héllo, 世界, 🙂 \"q\" \\ \n", "bad \xff\xfe \xc2 \xe2\x82 \xed\xa0\x80 end", "\x00\x1f\x7f\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), string(appendStringRef(nil, s)); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
