package rawjson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// TestObjectKeys holds Object's reading of keys (a short one where its
// loop is, a longer one or one with an escape by stringRest from where
// that stopped) to encoding/json: keys of up to 40 bytes with a quote, a
// backslash, an escape, a control character or a non-ASCII letter at each
// position, in objects cut short at each of their last bytes, are accepted
// when encoding/json accepts them, and visit gets each key as spelled,
// plain when it has no backslash.
func TestObjectKeys(t *testing.T) {
	specials := []string{``, `"`, `\`, `\"`, `\\`, `\u0041`, `\u00`, `\x`, "\x01", "\x1f", "é", "\x7f"}
	for n := 0; n <= 40; n++ {
		for p := 0; p <= n; p++ {
			for _, sp := range specials {
				key := strings.Repeat("k", p) + sp + strings.Repeat("k", n-p)
				for _, doc := range []string{`{"` + key + `":1}`, `{"a":"` + key + `","` + key + `":[1]}`, `{"` + key + `:1}`} {
					for cut := max(0, len(doc)-12); cut <= len(doc); cut++ {
						checkObjectKeys(t, []byte(doc[:cut]))
					}
				}
			}
		}
	}
}

func checkObjectKeys(t *testing.T, b []byte) {
	t.Helper()
	var keys [][]byte
	end := rawjson.Object(b, 1, rawjson.AllKeys, func(k []byte, v int, plain bool) int {
		if plain == bytes.Contains(k, []byte(`\`)) {
			t.Fatalf("%q: key %q plain %v", b, k, plain)
		}
		keys = append(keys, k)
		return 0
	})
	if got, want := end >= 0 && rawjson.SkipSpace(b, end) == len(b), json.Valid(b); got != want {
		t.Fatalf("Object(%q) = %d: valid %v, encoding/json %v", b, end, got, want)
	}
	if end < 0 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the opening brace
		t.Fatal(err)
	}
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		var k string
		if err := json.Unmarshal(append(append([]byte(`"`), keys[i]...), '"'), &k); err != nil || k != tok.(string) {
			t.Fatalf("%q: key %d read %q, encoding/json %q", b, i, keys[i], tok)
		}
	}
}
