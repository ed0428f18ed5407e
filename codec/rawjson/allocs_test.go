//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package rawjson_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

func TestZeroAllocs(t *testing.T) {
	f := func(name string, fn func()) {
		t.Helper()
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	body := chatRequest(false)
	fields := []rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "absent"}}
	for _, all := range []bool{false, true} {
		f("Lookup", func() {
			if err := rawjson.Lookup(body, fields, all); err != nil {
				panic(err)
			}
		})
	}
	v := body[fields[0].Start:fields[0].End]

	escaped := []byte(`{"\u006dessages":[],"mo\u0064el":"gpt-4o","stre\u0061m":true}`)
	f("Lookup with escaped keys", func() {
		if err := rawjson.Lookup(escaped, fields, true); err != nil || fields[0].Start < 0 {
			panic(err)
		}
	})
	f("StringBytes", func() {
		if _, ok := rawjson.StringBytes(v); !ok {
			panic("not a plain string")
		}
	})
	buf := make([]byte, 0, 64)
	f("AppendUnquote", func() {
		if _, err := rawjson.AppendUnquote(buf, []byte(`"mod\u0065l \ud83d\ude00"`)); err != nil {
			panic(err)
		}
	})
}
