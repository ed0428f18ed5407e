//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package rawjson_test

import (
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestZeroAllocs(t *testing.T) {
	body := chatRequest(false)
	fields := []rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "absent"}}
	for _, all := range []bool{false, true} {
		testutil.Allocs(t, "Lookup", 0, func() {
			if err := rawjson.Lookup(body, fields, all); err != nil {
				panic(err)
			}
		})
	}
	v := body[fields[0].Start:fields[0].End]

	escaped := []byte(`{"\u006dessages":[],"mo\u0064el":"gpt-4o","stre\u0061m":true}`)
	testutil.Allocs(t, "Lookup with escaped keys", 0, func() {
		if err := rawjson.Lookup(escaped, fields, true); err != nil || fields[0].Start < 0 {
			panic(err)
		}
	})
	testutil.Allocs(t, "StringBytes", 0, func() {
		if _, ok := rawjson.StringBytes(v); !ok {
			panic("not a plain string")
		}
	})
	buf := make([]byte, 0, 64)
	testutil.Allocs(t, "AppendUnquote", 0, func() {
		if _, err := rawjson.AppendUnquote(buf, []byte(`"mod\u0065l \ud83d\ude00"`)); err != nil {
			panic(err)
		}
	})
}
