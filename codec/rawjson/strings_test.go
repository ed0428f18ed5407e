package rawjson

import (
	"encoding/json"
	"testing"
)

func TestValidStrings(t *testing.T) {
	f := func(doc string) {
		t.Helper()
		if got, want := ValidStrings([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Fatalf("ValidStrings(%q) = %v, encoding/json says %v", doc, got, want)
		}
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
