package openai

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The fast chunk scanner must agree with the sonic path whenever it accepts
// a chunk (it may decline anything).

// chunkCorpus returns the data of every event of the golden and wire
// streams, and edge cases the fixtures do not have.
func chunkCorpus(t testing.TB) [][]byte {
	out := goldentest.EventData(t, "testdata/translate/stream/*.sse", "../testdata/wire/openai/*.sse")
	for _, s := range fastEdgeCases {
		out = append(out, []byte(s))
	}
	return out
}

var fastEdgeCases = []string{
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"a","choices":[{"delta":{"content":"no index"}}]}`,
	`{"id":"a","choices":[{"index":1,"delta":{"content":"x"}}]}`,
	`{"id":"a","choices":[{"index":0.0,"delta":{"content":"x"}}]}`,
	`{"id":"a","choices":[{"index":00,"delta":{"content":"x"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}`,
	`{"id":"a","Choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"Content":"x"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x","content":"y"}}]}`,
	`{"id":"a","id":"b","choices":[]}`,
	`{"i\u0064":"a","choices":[]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"\ud83d\ude00 \u00e9 \n\t\"\\\/"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"lone \ud800 surrogate"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"bad \x escape"}}]}`,
	"{\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"raw \x01 control\"}}]}",
	"{\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"invalid \xff utf8\"}}]}",
	// As long unescaped as escaped: the escapes shorten, U+FFFD lengthens.
	"{\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\\"\\\"\xff\"}}]}",
	"{\"id\":\"\\\"\\\"\xff\",\"model\":\"\\\"\\\"\xff\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}",
	// Declined by the scanner midway, read by sonic.
	`{"choices":[{"delta":{"content":"a","content":"\"x"}}]}`,
	`{"choices":[{"delta":{"content":"a"},"index":0,"index":1}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":null,"reasoning_content":null,"reasoning":"r"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":"rc"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"r"}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":null,"finish_reason":"stop"}]}`,
	`{"id":"a","choices":null}`,
	`{"id":"a","choices":[]} x`,
	`{"id":"a","choices":[]}   `,
	` {"id" : "a" , "choices" : [ { "index" : 0 , "delta" : { "content" : "sp" } } ] } `,
	`{"id":"a","created":-1.5e+10,"x":true,"y":false,"z":null,"choices":[]}`,
	`{"id":"a","created":1.,"choices":[]}`,
	`{"id":"a","created":-,"choices":[]}`,
	`{"id":"a","created":01,"choices":[]}`,
	`{"id":"a","nested":{"k":1},"choices":[]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":null,"function_call":null,"thinking_blocks":null}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"x"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":1.5,"function":{"arguments":"x"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":null}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"no index"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"index":1,"function":{"arguments":"x"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x","arguments":"y"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"},"function":{}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":null}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"extra":1,"function":{"arguments":"\u00e9\n","other":"z"}}]}}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"}}],"tool_calls":null}}]}`,
	`{"id":"a","usage":null,"error":null,"choices":[]}`,
	`{"id":"a","usage":{"prompt_tokens":1},"choices":[]}`,
	`{"id":1,"choices":[]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"role":1}}]}`,
	`{"id":"a","choices":[{"index":0,"finish_reason":1}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x"}}]`,
	`{"id":"a",}`,
	`{}`,
	`{"":""}`,
	`[]`,
	`"x"`,
}

func decodeBoth(data []byte) (fast, slow chunkView, fastOK bool, slowErr error) {
	var d StreamDecoder
	fastOK = d.fastChunk(data, &fast)
	var d2 StreamDecoder
	slowErr = d2.slowChunk(data, &slow)
	return
}

// sameView compares views, treating nil and empty slices alike. A content
// said to be plain must need no escaping (the sonic path never says so).
func sameView(a, b chunkView) bool {
	for _, v := range []*chunkView{&a, &b} {
		if v.contentPlain && string(rawjson.AppendString(nil, v.content)) != `"`+v.content+`"` {
			return false
		}
		v.contentPlain = false
	}
	norm := func(v *chunkView) {
		if len(v.toolCalls) == 0 {
			v.toolCalls = nil
		}
		if len(v.thinkingBlocks) == 0 {
			v.thinkingBlocks = nil
		}
		if isEmptyValue(v.err) {
			v.err = nil
		}
	}
	norm(&a)
	norm(&b)
	return reflect.DeepEqual(a, b)
}

func checkFastAgrees(t *testing.T, data []byte) {
	t.Helper()
	checkDecodeAgrees(t, nil, data)
	fast, slow, ok, err := decodeBoth(data)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("fast path accepted what sonic rejects (%v): %q", err, data)
	}
	if !sameView(fast, slow) {
		t.Fatalf("fast path disagrees on %q:\nfast %+v\nslow %+v", data, fast, slow)
	}
}

// checkDecodeAgrees decodes prime (when not nil) then data with Decode,
// the fast path and sonic after it if it declines, and checks that data's
// view is sonic's and that each text said to be plain needs no escaping.
func checkDecodeAgrees(t *testing.T, prime, data []byte) {
	t.Helper()
	var d StreamDecoder
	if prime != nil {
		if _, err := d.Decode(nil, nil, prime); err != nil || d.done {
			return
		}
	}
	events, err := d.Decode(nil, nil, data)
	if err != nil {
		return
	}
	for _, e := range events {
		if e.Plain && string(rawjson.AppendString(nil, e.Text)) != `"`+e.Text+`"` {
			t.Fatalf("text %q (after %q) is said to be plain: %q", e.Text, prime, data)
		}
	}
	var slow chunkView
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (&StreamDecoder{}).slowChunk(data, &slow) != nil {
		return
	}
	if !sameView(d.view, slow) {
		t.Fatalf("Decode (after %q) disagrees with sonic on %q:\nDecode %+v\nsonic  %+v", prime, data, d.view, slow)
	}
}

func TestFastChunkMatchesSonic(t *testing.T) {
	for _, data := range chunkCorpus(t) {
		checkFastAgrees(t, data)
	}
}

// The fast path must take the common chunks, or it quietly stops paying.
func TestFastChunkCoverage(t *testing.T) {
	f := func(data string, want bool) {
		t.Helper()
		var d StreamDecoder
		var v chunkView
		if got := d.fastChunk([]byte(data), &v); got != want {
			t.Errorf("fastChunk(%s) = %v, want %v", data, got, want)
		}
	}
	f(`{"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`, true)
	f(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"line\nbreak \"q\""},"finish_reason":null}]}`, true)
	f(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`, true)
	f(`{"id":"c","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" tenths:"},"logprobs":null,"finish_reason":null}]}`, true)
	f(`{"id":"c","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`, true)
	// Tool call fragments that carry only arguments.
	f(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"finish_reason":null}],"usage":null,"obfuscation":"x"}`, true)
	// Declined: a call's first fragment, several calls, usage, errors.
	f(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`, false)
	f(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}},{"index":1,"function":{"arguments":"{"}}]}}]}`, false)
	f(`{"id":"c","choices":[],"usage":{"prompt_tokens":1}}`, false)
	f(`{"error":{"message":"x"}}`, false)

	// Of the text and argument chunks of the wire fixtures, all take the
	// fast path.
	total, fast := 0, 0
	for _, name := range []string{"chat_stream_length.sse", "chat_stream_reasoning.sse", "chat_stream_tool_calls.sse"} {
		b, err := os.ReadFile("../testdata/wire/openai/" + name)
		if err != nil {
			t.Skip(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok || bytes.Contains(data, []byte(`"usage":{`)) || bytes.Contains(data, []byte(`"id":"call_`)) ||
				!bytes.Contains(data, []byte(`"content"`)) && !bytes.Contains(data, []byte(`"arguments"`)) {
				continue
			}
			total++
			var d StreamDecoder
			var v chunkView
			if d.fastChunk(data, &v) {
				fast++
			}
		}
	}
	if total == 0 || fast != total {
		t.Errorf("fast path took %d of %d text chunks", fast, total)
	}
}

func FuzzFastChunk(f *testing.F) {
	for _, data := range chunkCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		checkFastAgrees(t, data)
	})
}

// checkResumeAgrees reads prime in full, then data, possibly from the kept
// prefix, and compares data's view with sonic's.
func checkResumeAgrees(t *testing.T, prime, data []byte) {
	t.Helper()
	checkDecodeAgrees(t, prime, data)
	var d StreamDecoder
	var v chunkView
	d.fastChunk(prime, &v)
	var fast chunkView
	if !d.fastChunk(data, &fast) {
		return
	}
	var d2 StreamDecoder
	var slow chunkView
	if err := d2.slowChunk(data, &slow); err != nil {
		t.Fatalf("fast path (after %q) accepted what sonic rejects (%v): %q", prime, err, data)
	}
	if !sameView(fast, slow) {
		t.Fatalf("fast path (after %q) disagrees on %q:\nfast %+v\nslow %+v", prime, data, fast, slow)
	}
}

// Every chunk of every stream, read after the one before it (the way the
// prefix is reused), agrees with sonic; and the prefix is reused.
func TestFastChunkResumeMatchesSonic(t *testing.T) {
	corpus := chunkCorpus(t)
	for i := 1; i < len(corpus); i++ {
		checkResumeAgrees(t, corpus[i-1], corpus[i])
	}
	prime := []byte(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`)
	for _, next := range []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"},"delta":{}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"}}],"id":"again"}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"}},{"index":1}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"}}]} trailing`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"\u00e9"}}],"usage":null}`,
	} {
		checkResumeAgrees(t, prime, []byte(next))
	}
	// Keys after the choices are read again on every chunk.
	late := []byte(`{"choices":[{"index":0,"delta":{"content":"a"}}],"id":"late","model":"m2"}`)
	checkResumeAgrees(t, late, []byte(`{"choices":[{"index":0,"delta":{"content":"b"}}],"id":"other","model":"m3"}`))
	checkResumeAgrees(t, late, []byte(`{"choices":[{"index":0,"delta":{"content":"b"}}]}`))
	// An id and a model as long unescaped as escaped are not reused raw.
	const odd = "{\"id\":\"\\\"\\\"\xff\",\"model\":\"\\\"\\\"\xff\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
	checkResumeAgrees(t, []byte(odd+`"a"}}]}`), []byte(odd+`"b"}}]}`))
	checkResumeAgrees(t, []byte(odd+`"a"}}]}`), []byte(odd+`"b"},"finish_reason":null}]}`))

	var d StreamDecoder
	var v chunkView
	if !d.fastChunk(prime, &v) || len(d.prefix.prefix) == 0 {
		t.Fatalf("no prefix kept after %s", prime)
	}
	if got := string(d.prefix.prefix); !strings.HasSuffix(got, `"delta":`) {
		t.Errorf("prefix %q does not end at the delta", got)
	}
}

func FuzzFastChunkResume(f *testing.F) {
	corpus := chunkCorpus(f)
	for i := 1; i < len(corpus); i++ {
		f.Add(corpus[i-1], corpus[i])
	}
	f.Fuzz(func(t *testing.T, prime, data []byte) {
		if len(prime)+len(data) > 16<<10 {
			return
		}
		checkResumeAgrees(t, prime, data)
	})
}

// Chunks read after a text chunk whose shape was kept agree with sonic, and
// those that repeat it but for the text and the skipped string take the
// shape.
func TestFastChunkShape(t *testing.T) {
	const head = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":`
	prime := []byte(head + `"a"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"xyz"}`)
	// f reads prime, prime again (from the kept prefix), then next, and
	// checks next against sonic and whether it took the shape.
	f := func(prime []byte, next string, shaped bool) {
		t.Helper()
		for _, primes := range [][][]byte{{prime}, {prime, prime}} {
			var d StreamDecoder
			var v chunkView
			for _, p := range primes {
				d.fastChunk(p, &v)
			}
			took := len(d.shape.head) > 0 && bytes.HasPrefix([]byte(next), d.shape.head) && d.shapedChunk([]byte(next), &chunkView{})
			if took != shaped {
				t.Errorf("after %d primes, %s: shape taken %v, want %v", len(primes), next, took, shaped)
			}
			var fast chunkView
			if d.fastChunk([]byte(next), &fast) {
				var slow chunkView
				if err := (&StreamDecoder{}).slowChunk([]byte(next), &slow); err != nil || !sameView(fast, slow) {
					t.Errorf("%s: fast %+v, sonic %+v (%v)", next, fast, slow, err)
				}
			}
		}
	}
	tail := `},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":`
	f(prime, head+`"b"`+tail+`"q"}`, true)
	f(prime, head+`"a longer text, é and \"quoted\"\n"`+tail+`"qrstuvwxyz0123"}`, true)
	f(prime, head+`"\u00e9\ud83d\ude00"`+tail+`"\u0041"}`, true)
	f(prime, head+`""`+tail+`""}`, true)
	f(prime, head+"\"\\\"\\\"\xff\""+tail+`"q"}`, true) // not plain, though as long as unescaped
	// The strings read as the scanner reads them: what it declines, the
	// shape declines.
	f(prime, head+`"\ud800"`+tail+`"q"}`, false)
	f(prime, head+`"b"`+tail+`"\ud800"}`, false)
	f(prime, head+"\"\xff\""+tail+`"q"}`, false)
	f(prime, head+`"b"`+tail+"\"\x01\"}", false)
	f(prime, head+`"b`+tail+`"q"}`, false)
	f(prime, head+`"b"`+tail+`"q"`, false)
	f(prime, head+`"b"`+tail+`"q"} `, false)
	f(prime, head+`"b"`+tail+`"q"}}`, false)
	f(prime, head+`"b"`+tail+`null}`, false)
	// Other bytes than the kept chunk's: the scanner reads them.
	f(prime, head+`"b"},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"q"}`, false)
	f(prime, head+`"b","content":"c"`+tail+`"q"}`, false)
	f(prime, head+`null`+tail+`"q"}`, false)
	f(prime, strings.Replace(head, `"c1"`, `"c2"`, 1)+`"b"`+tail+`"q"}`, false)
	// No skipped string after the text: the rest must repeat.
	plain := []byte(head + `"a"},"finish_reason":null}]}`)
	f(plain, head+`"bc"},"finish_reason":null}]}`, true)
	f(plain, head+`"bc"},"finish_reason":null}],"x":"y"}`, false)
	// A skipped string before the text is not the free one.
	early := []byte(`{"id":"c1","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"a"}}]}`)
	f(early, `{"id":"c1","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"b"}}]}`, true)
	f(early, `{"id":"c1","system_fingerprint":"fq","choices":[{"index":0,"delta":{"content":"b"}}]}`, false)
	// No shape is kept from a chunk whose view holds more than the text, an
	// id and a model from before it.
	for _, p := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a"}}],"id":"late"}`,
		`{"id":"c\u0031","choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"content":"a","refusal":"r"}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"content":"a","reasoning_content":"r"}}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"content":null}}]}`,
	} {
		var d StreamDecoder
		var v chunkView
		if !d.fastChunk([]byte(p), &v) {
			t.Fatalf("fast path declines %s", p)
		}
		if len(d.shape.head) > 0 {
			t.Errorf("shape kept from %s", p)
		}
	}
}

// specialAt finds what a byte-by-byte look finds, and says whether a byte
// before it is above ASCII whenever one is, at every length and offset.
func TestSpecialAt(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0x1f, 0} {
		for n := range 20 {
			for hi := -1; hi < n; hi++ {
				b := bytes.Repeat([]byte{'a'}, n)
				if hi >= 0 {
					b[hi] = 0xc3
				}
				b = append(b, special, 0xff, 'z')
				i, high := specialAt(b)
				if i != n || hi >= 0 && !high || hi < 0 && high {
					t.Errorf("specialAt(%q) = %d, %v; want %d, %v", b, i, high, n, hi >= 0)
				}
			}
		}
	}
	if i, high := specialAt([]byte("plain text, no end")); i != 18 || high {
		t.Errorf("specialAt without a special = %d, %v", i, high)
	}
}

// A text read from a plain string is marked so, for encoders to copy it
// (read whole or by the shape); an escaped one is not.
func TestTextDeltaPlain(t *testing.T) {
	const head = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":`
	var d StreamDecoder
	for i, c := range []struct {
		text  string
		plain bool
	}{{`"a"`, true}, {`"b é"`, true}, {`"c\n"`, false}, {`"d"`, true}, {`"\u00e9"`, false}} {
		events, err := d.Decode(nil, nil, []byte(head+c.text+`},"finish_reason":null}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if e := events[len(events)-1]; e.Kind != codec.EventDelta || e.Plain != c.plain {
			t.Errorf("chunk %d, %s: %+v, want Plain %v", i, c.text, e, c.plain)
		}
	}
}

// The shape must take the text chunks of real streams after the first, or
// it quietly stops paying.
func TestFastChunkShapeCoverage(t *testing.T) {
	for _, name := range []string{"chat_stream_length.sse", "chat_stream_reasoning.sse"} {
		b, err := os.ReadFile("../testdata/wire/openai/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var d StreamDecoder
		texts, shaped := 0, 0
		for _, line := range bytes.Split(b, []byte("\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok || !bytes.Contains(data, []byte(`"content":"`)) || bytes.Contains(data, []byte(`"role"`)) ||
				bytes.Contains(data, []byte(`"finish_reason":"`)) {
				continue
			}
			texts++
			if len(d.shape.head) > 0 && bytes.HasPrefix(data, d.shape.head) && d.shapedChunk(data, &chunkView{}) {
				shaped++
			}
			if _, err := d.Decode(nil, nil, data); err != nil {
				t.Fatal(err)
			}
		}
		if texts < 3 || shaped < texts-1 {
			t.Errorf("%s: the shape took %d of %d text chunks", name, shaped, texts)
		}
	}
}
