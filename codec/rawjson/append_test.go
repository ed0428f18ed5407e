package rawjson

import (
	"encoding/json"
	"testing"
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
