package rawjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestValidStrings(t *testing.T) {
	f := func(doc string) {
		t.Helper()
		want := json.Valid([]byte(doc))
		bothWays(t, func(way string) {
			if got := ValidStrings([]byte(doc)); got != want {
				t.Fatalf("%s: ValidStrings(%q) = %v, encoding/json says %v", way, doc, got, want)
			}
		})
	}
	f(`{"a":"plain","b":["x","y"]}`)
	f(`{"a":"escapes \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"}`)
	f(`{"a":"` + "long text that crosses several eight-byte words, é and 世界" + `"}`)
	f(`{"a":"eight!!!","b":"1234567\""}`)
	f("{\"a\":\"tab\there\"}")
	f("{\"a\":\"nul\x00\"}")
	f("{\"a\":\"x\x1f\"}")
	f(`{"a":"\x41"}`)
	f(`{"a":"\u00"}`)
	f(`{"a":"\u00zz"}`)
	f(`{"a":"ends with backslash\\"}`)
	f(`{"a\n":1}`)
	f("{\"k\":\"ok\"}\n")
}

// ValidStrings reads backslashes and control characters without following
// the quotes until the first control character; it must agree with the
// quote-following reading on every structurally valid document.
func TestValidStringsMatchesQuoted(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `""`, `"\\"`, `"\""`, `["\\\\","\\\""]`, `{"\"":"\\"}`,
		`{"a":"\u12"}`, `{"a":"\u123g"}`, `{"a":"\uABCD\uabcd"}`, `{"a":"\q"}`, `{"a":"12345678\q"}`,
		`{"a":"1234567\\","b":"x"}`, `{"a":"12345678\\\\\\\\\"\"","b":"\/"}`,
		"{\n  \"a\": \"b\",\n\t\"c\": [1,\r\n2]\n}",
		"{\n  \"a\": \"b\\n\"\n}", "{\"a\":\"b\\n\"}\n", "{\n\"a\":\"tab\there\"}", "{\"a\":\"tab\there\"}",
		"{\"a\":\"\x7f\x80\xff\"}", "{\"a\":\"é世界\x01\"}", "{\"a\":1}\r\n",
		// sonic.Valid takes this unterminated string.
		`"00000000000000000000000000000000`, ` "00000000000000000000000000000000`,
	}
	for _, d := range docs {
		want := validStringsQuoted([]byte(d))
		bothWays(t, func(way string) {
			if got := ValidStrings([]byte(d)); got != want {
				t.Errorf("%s: ValidStrings(%q) = %v, following the quotes %v", way, d, got, want)
			}
		})
	}
}

// FuzzValidUTF8 holds validUTF8 to utf8.Valid.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"plain ascii words", "near 7 °C, héllo, 世界, 🙂", "bad \xff\xfe \xc2 \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf end", "\xc2\x80\xdf\xbf"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validUTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("validUTF8(%q) = %v, want %v", b, got, want)
		}
	})
}
