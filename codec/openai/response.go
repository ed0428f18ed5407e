package openai

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

var (
	keyModel   = []byte(`"model"`)
	keyUsage   = []byte(`"usage"`)
	keyChoices = []byte(`"choices"`)
)

// ModelSpan finds the value of the "model" field of a response or stream
// chunk: the span of the name between its quotes, or -1, -1. It looks for the
// first `"model":"` (an unescaped quote followed by a colon can only be a
// key, never string content), which in OpenAI output is the top-level one:
// it precedes "choices". Names with escapes are reported as absent.
func ModelSpan(b []byte) (start, end int) {
	v := valueAfterKey(b, keyModel)
	if v < 0 || b[v] != '"' {
		return -1, -1
	}
	n := bytes.IndexByte(b[v+1:], '"')
	if n < 0 || bytes.IndexByte(b[v+1:v+1+n], '\\') >= 0 {
		return -1, -1
	}
	return v + 1, v + 1 + n
}

// UsageSpan returns the span of a non-null top-level "usage" object of a
// response or chunk, or -1, -1. The cheap scan for `"usage":{` keeps the
// common chunk (no usage, or "usage":null) off the slower top-level lookup.
func UsageSpan(b []byte) (start, end int) {
	if endsWithNullUsage(b) {
		return -1, -1
	}
	v := valueAfterKey(b, keyUsage)
	if v < 0 || b[v] != '{' {
		return -1, -1
	}
	f := [...]rawjson.Field{{Key: "usage"}}
	if rawjson.Lookup(b, f[:], false) != nil || f[0].Start < 0 ||
		rawjson.KindOf(b[f[0].Start:f[0].End]) != rawjson.KindObject {
		return -1, -1 // the "usage" found first was nested
	}
	return f[0].Start, f[0].End
}

// endsWithNullUsage reports whether the object b ends with `"usage":null}`:
// with include_usage on, OpenAI puts that on every chunk but the last, and
// checking the tail settles them without a scan.
func endsWithNullUsage(b []byte) bool {
	for _, tail := range [...]string{"}", "null", ":", `"usage"`} {
		b = bytes.TrimRight(b, " \t\r\n")
		if !bytes.HasSuffix(b, []byte(tail)) {
			return false
		}
		b = b[:len(b)-len(tail)]
	}
	return true
}

// IsUsageOnlyChunk reports whether a stream chunk carries usage and no
// choices: the extra chunk that stream_options.include_usage asks for. (Azure
// also sends chunks with no choices, for prompt filter results: those have
// no usage and are not this chunk.)
func IsUsageOnlyChunk(b []byte) bool {
	if s, _ := UsageSpan(b); s < 0 {
		return false
	}
	v := valueAfterKey(b, keyChoices)
	if v < 0 || b[v] != '[' {
		return false
	}
	f := [...]rawjson.Field{{Key: "choices"}}
	if rawjson.Lookup(b, f[:], false) != nil || f[0].Start < 0 {
		return false
	}
	return rawjson.ArrayEmpty(b[f[0].Start:f[0].End])
}

// valueAfterKey returns the offset of the value that follows the first
// occurrence of the quoted key and a colon, or -1.
func valueAfterKey(b, key []byte) int {
	for off := 0; ; {
		i := bytes.Index(b[off:], key)
		if i < 0 {
			return -1
		}
		at := off + i
		j := rawjson.SkipSpace(b, at+len(key))
		if j < len(b) && b[j] == ':' && !escaped(b, at) {
			if j = rawjson.SkipSpace(b, j+1); j < len(b) {
				return j
			}
			return -1
		}
		off += i + len(key)
	}
}

// escaped reports whether the quote at b[i] is escaped: preceded by an odd
// number of backslashes (then it ends a key like "a\"model", not "model").
func escaped(b []byte, i int) bool {
	n := 0
	for i-1-n >= 0 && b[i-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// DecodeUsage decodes an OpenAI usage object. It reads the four counts it
// needs with rawjson instead of a struct decode: this runs on every
// response, and costs a tenth of sonic.Unmarshal here.
func DecodeUsage(b []byte) (codec.Usage, error) {
	f := [...]rawjson.Field{{Key: "prompt_tokens"}, {Key: "completion_tokens"},
		{Key: "prompt_tokens_details"}, {Key: "completion_tokens_details"}}
	if err := rawjson.Lookup(b, f[:], false); err != nil {
		return codec.Usage{}, err
	}
	var u codec.Usage
	var err error
	if u.Input, err = count(b, f[0]); err != nil {
		return u, err
	}
	if u.Output, err = count(b, f[1]); err != nil {
		return u, err
	}
	if u.CachedInput, err = detail(b, f[2], "cached_tokens"); err != nil {
		return u, err
	}
	u.Reasoning, err = detail(b, f[3], "reasoning_tokens")
	return u, err
}

// detail reads one count of a details object (which may be absent or null).
func detail(b []byte, obj rawjson.Field, key string) (int, error) {
	if obj.Start < 0 || rawjson.KindOf(b[obj.Start:obj.End]) == rawjson.KindNull {
		return 0, nil
	}
	v := b[obj.Start:obj.End]
	f := [...]rawjson.Field{{Key: key}}
	if err := rawjson.Lookup(v, f[:], false); err != nil {
		return 0, err
	}
	return count(v, f[0])
}

// count reads a token count: absent or null is 0, anything but a
// non-negative integer is an error.
func count(b []byte, f rawjson.Field) (int, error) {
	if f.Start < 0 || rawjson.KindOf(b[f.Start:f.End]) == rawjson.KindNull {
		return 0, nil
	}
	n, err := strconv.Atoi(string(b[f.Start:f.End]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("usage: %q is not a token count", b[f.Start:f.End])
	}
	return n, nil
}
