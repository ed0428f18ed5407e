package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// The readers of a whole answer and of a usage object as they were before
// the usage was walked in a loop of its own (branch answer): a member at a
// time through rawjson.Object, each key searched for its quote and
// compared as a string. TestUsageReadAsBefore and FuzzUsageReadAsBefore
// hold the new readers to them, error messages and Again included.

func oldReadRelayed(body []byte, k *usageKeys) (codec.Relayed, bool) {
	r := codec.Relayed{ModelStart: -1, ModelEnd: -1, Keys: &relayedKeys, UsageAt: -1}
	if i := rawjson.SkipSpace(body, 0); i < len(body) && body[i] != '{' {
		return r, rawjson.Valid(body)
	}
	model := -1
	end := rawjson.Object(body, 1, relayedLens, func(key []byte, v int, plain bool) int {
		if !plain {
			key = unescaped(key, relayedNames)
		}
		switch string(key) {
		case "model":
			r.Again = r.Again || model >= 0 || !plain
			model = v
		case "usage":
			r.Again = r.Again || r.UsageAt >= 0 || !plain
			r.Usage, r.HasUsage, r.UsageAt = codec.Usage{}, false, v
			if v >= len(body) || body[v] != '{' {
				break
			}
			u, end, err := oldReadUsage(body[v:], 2, k, &r.Again)
			if end < 0 {
				return end
			}
			if err == nil {
				r.Usage, r.HasUsage = u, true
			}
			return v + end
		}
		return 0
	})
	if end < 0 || rawjson.SkipSpace(body, end) != len(body) {
		return codec.Relayed{}, false
	}
	if model >= 0 {
		r.ModelStart, r.ModelEnd = modelSpanAt(body, model)
		r.Again = r.Again || r.ModelStart < 0 && body[model] == '"'
	}
	return r, true
}

func oldReadUsage(b []byte, depth int, k *usageKeys, again *bool) (u codec.Usage, end int, err error) {
	var errs [4]error
	var keys rawjson.KeySet
	end, broken := rawjson.ObjectError(b, depth, rawjson.AllKeys, func(key []byte, v int, plain bool) int {
		if !plain {
			key = unescaped(key, k.names)
			*again = true
		} else {
			keys.Add(key)
		}
		end := 0
		switch {
		case string(key) == k.input:
			u.Input, end, errs[0] = countAt(b, v, depth)
		case string(key) == k.output:
			u.Output, end, errs[1] = countAt(b, v, depth)
		case string(key) == k.inputDetails:
			u.CachedInput, end, errs[2] = oldDetail(b, v, depth, "cached_tokens", again)
		case string(key) == k.outputDetails:
			u.Reasoning, end, errs[3] = oldDetail(b, v, depth, "reasoning_tokens", again)
		}
		return end
	})
	if broken != nil {
		return u, -1, broken
	}
	*again = *again || keys.Repeats(b[:end])
	for _, err := range errs {
		if err != nil {
			return u, end, err
		}
	}
	return u, end, nil
}

func oldDetail(b []byte, v, depth int, key string, again *bool) (n, end int, err error) {
	if rawjson.KindOf(b[v:]) != rawjson.KindObject {
		end = rawjson.CheckValue(b, v, depth)
		if end >= 0 && rawjson.KindOf(b[v:end]) != rawjson.KindNull {
			err = fmt.Errorf("usage: %.20q is not a details object", b[v:end])
		}
		return 0, end, err
	}
	d, seen := b[v:], false
	end = rawjson.Object(d, depth+1, rawjson.KeyLengths(key), func(k []byte, w int, plain bool) int {
		if !rawjson.KeyIs(k, plain, key) {
			return 0
		}
		*again = *again || seen || !plain
		seen = true
		var end int
		n, end, err = countAt(d, w, depth+1)
		return end
	})
	if end < 0 {
		return 0, end, nil
	}
	return n, v + end, err
}

// readAsBefore fails t when the answer body is read otherwise than before,
// whole and as a usage object from each of its first braces on (nested
// as in an answer, and at the top as DecodeUsage reads it).
func readAsBefore(t *testing.T, body []byte) {
	t.Helper()
	for _, k := range []*usageKeys{&chatUsage, &responsesUsage} {
		got, ok := readRelayed(body, k)
		want, wantOK := oldReadRelayed(body, k)
		if ok != wantOK || got != want {
			t.Fatalf("readRelayed(%q) = %+v, %v; before %+v, %v", body, got, ok, want, wantOK)
		}
		braces := 0
		for i := range body {
			if body[i] != '{' {
				continue
			}
			if braces++; braces > 64 {
				break
			}
			for depth := 1; depth <= 2; depth++ {
				var again, wantAgain bool
				u, end, err := readUsage(body[i:], depth, k, &again)
				wu, wend, werr := oldReadUsage(body[i:], depth, k, &wantAgain)
				if u != wu || end != wend || fmt.Sprint(err) != fmt.Sprint(werr) || end >= 0 && again != wantAgain {
					t.Fatalf("readUsage(%q, %d) = %+v, %d, %v, again %v; before %+v, %d, %v, %v",
						body[i:], depth, u, end, err, again, wu, wend, werr, wantAgain)
				}
			}
		}
	}
}

// usageSeeds are answers and usage objects whose usage is read, with
// its keys repeated, escaped, misspelled, cut short and in other orders.
func usageSeeds(t testing.TB) [][]byte {
	seeds := []string{
		`{"id":"x","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
		`{"model":"m","usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2},"completion_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":2},"usage":{"prompt_tokens":5},"model":"a","model":"b"}`,
		`{"usage":{"completion_tokens_details":5}}`, `{"usage":{"prompt_tokens_details":{"cached_tokens":-1}}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":1,}}}`, `{"usage":{"prompt_tokens":01}}`, `{"usage":{"x":[}}`,
		`{"usage":{"prompt_tokens_details":nul}}`, `{"usage":{"prompt_tokens_details":nullx}}`, `{"usage":{"prompt_tokens_details":`,
		`{"usage":{"input_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}`, `[1]`, `"x"`, ` {} `, `{"usage":{}} x`,
		`{"usage":{"prompt_tokens":0,"completion_tokens":12 ,"prompt_tokens_details":{"cached_tokens":3}}}`,
		`{"usage":{"prompt_tokens":1234567890123456789,"completion_tokens":-0}}`, `{"usage":{"prompt_tokens":7]}}`,
		`{"usage":{"prompt_tokens":1.5,"completion_tokens":2e1}}`, `{"usage":{"completion_tokens":00}}`,
		`{"usage":{"total_tokens":3,"total_tokens":99,"prompt_tokens":1}}`,
		`{"usage":{"prompt_tokens_details":{"audio_tokens":1,"audio_tokens":2,"cached_tokens":3},"x":{"a":1,"a":2}}}`,
		`{"usage":{"pr\u006fmpt_tokens":4,"completion_tokens_details":{"re\u0061soning_tokens":5,"reasoning_tokens":6}}}`,
		`{"usage":{"prompt_tokens" : 4 , "completion_tokens_details" : { "reasoning_tokens" : 5 , "audio_tokens" : 0 } }}`,
		`{"usage":{"prompt_tokens":"4","completion_tokens":null,"prompt_tokens_details":[],"completion_tokens_details":{"reasoning_tokens":"x"}}}`,
		`{"usage":{"prompt_tokens_x":1,"prompt_token":2,"prompt_tokens_details_":{},"accepted_prediction_tokens":3}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":"x"}}`, `{"usage":{"prompt_tokens":"x","prompt_tokens":1}}`,
		`{"usage":{"prompt_tokens":1} ,"usage" :null}`, `{"usage":{"prompt_tokens":1`, `{"usage":{"prompt_tokens"`,
		`{"usage":{"prompt_tokens":1}`, `{"usage":{"prompt_tokens"1}}`, `{"usage":{prompt_tokens:1}}`,
		"{\"usage\":{\"prompt_tokens\x01\":1}}", "{\"usage\":{\"prompt_tokens\":1,\"completion_tokens_details\":{\"reasoning_tokens\":2,\"\xff\":1}}}",
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}}}`,
		`{"usage":{"prompt_tokens_details":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
		`{"usage":{"x":{"a":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
		`{"usage":{"x":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
		testutil.ResponseObject("resp_1", "gpt-4o-2024-08-06", "completed", "Hello there"),
	}
	var out [][]byte
	for _, s := range seeds {
		out = append(out, []byte(s))
	}
	files, _ := filepath.Glob("../../proxy/testdata/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err == nil {
			out = append(out, compact.Bytes())
		}
		out = append(out, b)
	}
	return out
}

// TestUsageReadAsBefore holds readRelayed and readUsage to the readers
// before them on usageSeeds, and on the chat answers' usage (compact and
// indented) and a Responses answer's cut at every byte, with whitespace
// put in at every byte, and with every byte of them replaced by one of a
// few that change what the walk reads.
func TestUsageReadAsBefore(t *testing.T) {
	seeds := usageSeeds(t)
	for _, b := range seeds {
		readAsBefore(t, b)
	}
	answers := [][]byte{seeds[0], []byte(testutil.ResponseObject("r", "m", "completed", "Hi"))}
	b, err := os.ReadFile("../../proxy/testdata/chat_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	answers = append(answers, compact.Bytes(), b)
	for _, a := range answers {
		from := bytes.Index(a, []byte(`"usage"`))
		for i := from; i <= len(a); i++ {
			readAsBefore(t, a[:i])
			for _, ws := range []string{" ", "\n\t", "\r"} {
				readAsBefore(t, slices.Concat(a[:i], []byte(ws), a[i:]))
			}
			if i == len(a) {
				break
			}
			for _, c := range []byte(" \"\\,:{}[]01x\x01\xffn.-e") {
				m := bytes.Clone(a)
				m[i] = c
				readAsBefore(t, m)
			}
		}
	}
}

// FuzzUsageReadAsBefore is TestUsageReadAsBefore's comparison on any
// input.
func FuzzUsageReadAsBefore(f *testing.F) {
	for _, b := range usageSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) { readAsBefore(t, body) })
}

// TestUsageForm: the usage objects OpenAI writes, compact and indented,
// in chat answers and chunks and in Responses answers, are read by their
// form, not walked; TestUsageReadAsBefore holds what is read to the walk.
func TestUsageForm(t *testing.T) {
	b, err := os.ReadFile("../../proxy/testdata/chat_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	stream, err := os.ReadFile("../../proxy/testdata/chat_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(stream, []byte("\n"))
	chunk := bytes.TrimPrefix(lines[slices.IndexFunc(lines, func(l []byte) bool { return bytes.Contains(l, []byte(`"usage":{`)) })], []byte("data: "))
	usageIn := func(body []byte) []byte {
		var answer struct{ Usage json.RawMessage }
		if err := json.Unmarshal(body, &answer); err != nil {
			t.Fatal(err)
		}
		return body[bytes.Index(body, answer.Usage):]
	}
	for _, c := range []struct {
		k     *usageKeys
		usage []byte
		want  codec.Usage
	}{
		{&chatUsage, usageIn(compact.Bytes()), codec.Usage{Input: 19, Output: 10}},
		{&chatUsage, usageIn(b), codec.Usage{Input: 19, Output: 10}},
		{&chatUsage, usageIn(chunk), codec.Usage{Input: 19, Output: 8, CachedInput: 3, Reasoning: 2}},
		{&responsesUsage, usageIn([]byte(testutil.ResponseObject("r", "m", "completed", "Hi"))),
			codec.Usage{Input: 12, Output: 3, CachedInput: 2, Reasoning: 1}},
	} {
		u, end, ok := c.k.readForm(c.usage)
		if !ok || u != c.want || end != rawjson.ValueEnd(c.usage, 0) {
			t.Errorf("readForm(%.40q) = %+v, %d, %v; want %+v", c.usage, u, end, ok, c.want)
		}
	}
}
