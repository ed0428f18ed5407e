package rawjson

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestShortNumbers holds the short paths for numbers (shortInteger, and a
// 0 read in topValue) to validNumber: every string of up to five bytes
// drawn from digits, the bytes that end or go on with a number and the
// bytes beside the digits' range, followed by digits or other bytes so
// that a word's worth lies past it, read where a number starts gives
// validNumber's end, and Valid of a member or element so spelled gives
// encoding/json's answer.
func TestShortNumbers(t *testing.T) {
	const alphabet = "0159./:eE-+,} x\xfa"
	tails := []string{"", "}", "0000000", "1234567}", ",\"a\":1}", " }"}
	var s []byte
	var walk func(n int)
	walk = func(n int) {
		for _, tail := range tails {
			b := append(s[:len(s):len(s)], tail...)
			if len(b) == 0 {
				continue
			}
			want := validNumber(b, 0)
			if c := b[0]; c-'1' <= 8 {
				if got := shortInteger(b, 0); got != 0 && got != want {
					t.Fatalf("shortInteger(%q) = %d, validNumber %d", b, got, want)
				}
			}
			if c := b[0]; c == '0' || c-'1' <= 8 {
				if got := topValue(b, 0, nil, maxDepth); got != want {
					t.Fatalf("topValue(%q) = %d, validNumber %d", b, got, want)
				}
			}
		}
		if n == 5 {
			return
		}
		for k := range len(alphabet) {
			s = append(s, alphabet[k])
			walk(n + 1)
			s = s[:len(s)-1]
		}
	}
	walk(0)

	// Through the walk of a document: a member's number, and one of the
	// top-level object's (topValue).
	for _, doc := range []string{`{"a":{"b":%s}}`, `{"a":%s}`, `[%s]`, `{"a":[{"b":%s,"c":1}]}`} {
		for _, num := range []string{"0", "00", "01", "0.5", "0e1", "0E1", "0.", "1", "12", "1234567", "12345678",
			"123.4", "123e4", "123E+4", "1234567.", "7x", "1-", "0-", "9/", "9:"} {
			b := []byte(fmt.Sprintf(doc, num))
			if got, want := Valid(b), json.Valid(b); got != want {
				t.Errorf("Valid(%s) = %v, encoding/json %v", b, got, want)
			}
			err := LookupValid(b, nil)
			if got, want := err == nil, json.Valid(b) && b[0] == '{'; got != want {
				t.Errorf("LookupValid(%s) = %v, want valid %v", b, err, want)
			}
		}
	}
}
