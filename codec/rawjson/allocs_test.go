//go:build !race

// The race detector allocates on its own, so these tests only run without it.

package rawjson_test

import (
	"strings"
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
	testutil.Allocs(t, "LookupValid", 0, func() {
		if err := rawjson.LookupValid(body, fields); err != nil {
			panic(err)
		}
	})
	chunk := []byte(streamChunk)
	testutil.Allocs(t, "Valid", 0, func() {
		if !rawjson.Valid(chunk) || !rawjson.Valid(body) {
			panic("invalid")
		}
	})
	keys, at := []string{"model", "usage"}, make([]int, 2)
	testutil.Allocs(t, "ValidKeys", 0, func() {
		if !rawjson.ValidKeys(chunk, keys, at) || at[0] < 0 {
			panic("invalid")
		}
	})
	var shape rawjson.Shape // once its buffer holds a chunk, of any shape
	shapeAt := make([]int, len(shapeKeys))
	other := []byte(`{"choices":[],"usage":{"prompt_tokens":1}}`)
	wire := [][]byte{[]byte(wireChunk(" world", "dBNii")), []byte(wireChunk(" there", "khkI7m07"))}
	testutil.Allocs(t, "Shape.ValidKeys", 0, func() {
		if !shape.ValidKeys(chunk, shapeKeys, shapeAt, shapeTop) || !shape.ValidKeys(other, shapeKeys, shapeAt, shapeTop) ||
			!shape.ValidKeys(wire[0], shapeKeys, shapeAt, shapeTop) || !shape.ValidKeys(wire[1], shapeKeys, shapeAt, shapeTop) {
			panic("invalid")
		}
	})
	deep := []byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	testutil.Allocs(t, "Valid nested 5000 deep", 0, func() {
		if !rawjson.Valid(deep) {
			panic("invalid")
		}
	})
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
