package gemini

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// The fast chunk scanner (and its template replay) must read what readChunk
// reads whenever it accepts a chunk; it may decline anything.

// geminiChunks returns the data of every event of the golden and wire
// streams, and of the edge cases below.
func geminiChunks(t testing.TB) [][]byte {
	out := goldentest.EventData(t, "testdata/stream/*.sse", "../testdata/wire/gemini/*.sse", "../testdata/in/gemini/*.sse")
	for _, s := range fastEdgeCases {
		out = append(out, []byte(s))
	}
	return out
}

const fastText = `{"candidates": [{"content": {"parts": [{"text": "hi"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": 35,"totalTokenCount": 358,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 12}],"thoughtsTokenCount": 311},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`

var fastEdgeCases = []string{
	fastText,
	`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0}],"modelVersion":"m","responseId":"r"}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"promptTokenCount":1}}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","thought":true}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","thought":false}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","thought":null}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"c2ln"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"rosetta.rawsig:YWJj"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b","thought":true},{"text":"c"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"},{"text":"e"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP","index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}},{"content":{"parts":[{"text":"y"}]}}]}`,
	`{"candidates":[]}`,
	`{"candidates":null}`,
	`{"candidates":{"content":{"parts":{"text":"single values"}}}}`,
	`{"candidates":[{"content":{"parts":[]}}]}`,
	`{"candidates":[{"content":{}}]}`,
	`{"candidates":[{}]}`,
	`{}`,
	`{"Candidates":[{"content":{"parts":[{"text":"x"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"Text":"x"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x","text":"y"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"candidates":[]}`,
	`{"cand\u0069dates":[{"content":{"parts":[{"text":"x"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"\ud83d\ude00 \u00e9 \n\t\"\\\/"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"bad \x escape"}]}}]}`,
	"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"raw \x01 control\"}]}}]}",
	"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"invalid \xff utf8\"}]}}]}",
	`{"candidates":[{"content":{"parts":[{"text":null}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":1}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":null}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":1}}]}`,
	`{"candidates":[{"index":1.5}]}`,
	`{"candidates":[{"index":-1}]}`,
	`{"candidates":[{"index":01}]}`,
	`{"candidates":[{"finishReason":null}]}`,
	`{"usageMetadata":null}`,
	`{"usageMetadata":{}}`,
	`{"usageMetadata":{"promptTokenCount":"12"}}`,
	`{"usageMetadata":{"promptTokenCount":12.0}}`,
	`{"usageMetadata":{"promptTokenCount":1e2}}`,
	`{"usageMetadata":{"promptTokenCount":-1}}`,
	`{"usageMetadata":{"promptTokenCount":0}}`,
	`{"usageMetadata":{"promptTokenCount":00}}`,
	`{"usageMetadata":{"promptTokenCount":123456789012345}}`,
	`{"usageMetadata":{"promptTokenCount":1234567890123456}}`,
	`{"usageMetadata":{"promptTokenCount":99999999999999999999}}`,
	`{"usageMetadata":{"prompt_token_count":5}}`,
	`{"usageMetadata":{"promptTokenCount":1,"promptTokenCount":2}}`,
	`{"usageMetadata":{"candidatesTokenCount":1,"totalTokenCount":2,"thoughtsTokenCount":3,"cachedContentTokenCount":4,"toolUsePromptTokenCount":5}}`,
	`{"usageMetadata":{"promptTokensDetails":[],"cacheTokensDetails":[{"modality":"TEXT","tokenCount":4}],"candidatesTokensDetails":[{"modality":"TEXT"}],"toolUsePromptTokensDetails":[{"tokenCount":1}]}}`,
	`{"usageMetadata":{"promptTokensDetails":[{"modality":"TEXT","tokenCount":1.5}]}}`,
	`{"usageMetadata":{"promptTokensDetails":[{"modality":"TEXT","extra":1}]}}`,
	`{"usageMetadata":{"trafficType":"ON_DEMAND"}}`,
	`{"promptFeedback":{"blockReason":"SAFETY"}}`,
	`{"error":{"code":500,"message":"m","status":"INTERNAL"}}`,
	`{"modelVersion":"m","responseId":"r","modelVersion":"n"}`,
	`{"modelVersion":null}`,
	`{"responseId":"\u0072"}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]} x`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}   `,
	` { "candidates" : [ { "content" : { "parts" : [ { "text" : "sp" } ] } } ] } `,
	"{\r\n\t\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"crlf\"}]}}]}",
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"},]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]`,
	`{"candidates":[{"content":{"parts":[{"text":"x}]}}]}`,
	`{"":""}`,
	`[]`,
	`"x"`,
	`{`,
}

// read is what a chunk reads as: the chunk fields and its parts.
type read struct {
	c     wireChunk
	parts []wirePart
}

func slowRead(data []byte) (read, bool) {
	var r read
	var w wirePart
	var sd strDecoder
	p := parser{b: data}
	ok := readChunk(&p, &r.c, &w, &sd, func(w *wirePart) { r.parts = append(r.parts, clonePart(*w)) })
	r.c = cloneChunk(r.c)
	return r, ok
}

// fastChunkOrReplay reads data as Decode's fast paths do: the template's
// replay, or else fastChunk.
func fastChunkOrReplay(d *StreamDecoder, data []byte) (int, bool) {
	if n, ok := d.replay(data); ok {
		return n, true
	}
	return d.fastChunk(data)
}

// fastRead reads data with d's fast paths.
func fastRead(d *StreamDecoder, data []byte) (read, bool) {
	d.sd.buf = d.sd.buf[:0]
	n, ok := fastChunkOrReplay(d, data)
	if !ok {
		return read{}, false
	}
	r := read{c: cloneChunk(d.c)}
	for _, fp := range d.fastParts[:n] {
		r.parts = append(r.parts, clonePart(wirePart{Text: fp.text, Thought: fp.thought, ThoughtSignature: fp.sig}))
	}
	return r, true
}

// The strings point into buffers that the next read reuses.
func cloneChunk(c wireChunk) wireChunk {
	c.FinishReason, c.BlockReason = strings.Clone(c.FinishReason), strings.Clone(c.BlockReason)
	c.ModelVersion, c.ResponseID = strings.Clone(c.ModelVersion), strings.Clone(c.ResponseID)
	c.Error = append([]byte(nil), c.Error...)
	return c
}

func clonePart(w wirePart) wirePart {
	w.Text, w.ThoughtSignature = strings.Clone(w.Text), strings.Clone(w.ThoughtSignature)
	return w // the fast path takes no other members
}

// checkFastAgrees checks data read after prime (when not nil) once, and
// twice: the second read of prime, its first replay, fixes its counts.
func checkFastAgrees(t *testing.T, prime, data []byte) {
	t.Helper()
	if prime == nil {
		checkFastAgreesAfter(t, data)
		return
	}
	checkFastAgreesAfter(t, data, prime)
	checkFastAgreesAfter(t, data, prime, prime)
}

func checkFastAgreesAfter(t *testing.T, data []byte, primes ...[]byte) {
	t.Helper()
	var d StreamDecoder
	for _, prime := range primes {
		fastRead(&d, prime)
	}
	fast, ok := fastRead(&d, data)
	if !ok {
		return
	}
	for _, fp := range d.fastParts[:len(fast.parts)] {
		if fp.plain && string(rawjson.AppendString(nil, fp.text)) != `"`+fp.text+`"` {
			t.Fatalf("a text marked plain needs escaping: %q in %q", fp.text, data)
		}
	}
	slow, slowOK := slowRead(data)
	if !slowOK {
		t.Fatalf("fast path (after %q) accepted what readChunk rejects: %q", primes, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast path (after %q) disagrees on %q:\nfast %+v\nslow %+v", primes, data, fast, slow)
	}
}

func TestFastChunkMatchesReadChunk(t *testing.T) {
	chunks := geminiChunks(t)
	for _, data := range chunks {
		checkFastAgrees(t, nil, data)
	}
	// Every chunk after every other: replays where the shapes agree.
	for _, prime := range chunks {
		for _, data := range chunks {
			checkFastAgrees(t, prime, data)
		}
	}
}

// The first replay of a template fixes the counts that stayed: the next
// replay reads the others alone, and a chunk whose fixed count changes is
// read in full and read right.
func TestReplayFixesCounts(t *testing.T) {
	var d StreamDecoder
	counts := func(prompt, candidates, total string) []byte {
		return []byte(strings.NewReplacer(`"promptTokenCount": 12`, `"promptTokenCount": `+prompt,
			`"candidatesTokenCount": 35`, `"candidatesTokenCount": `+candidates,
			`"totalTokenCount": 358`, `"totalTokenCount": `+total).Replace(fastText))
	}
	for i, c := range []struct {
		chunk      []byte
		replayed   bool
		values     int // the template's steps and counts after the chunk
		candidates int
	}{
		{counts("12", "35", "358"), false, 8, 35}, // the text and 6 counts, and the end
		{counts("12", "36", "359"), true, 4, 36},  // prompt, index, details and thoughts fixed
		{counts("12", "37", "360"), true, 4, 37},
		{counts("13", "38", "361"), false, 8, 38}, // the prompt changed: a new template
		{counts("13", "39", "362"), true, 4, 39},
	} {
		replayed := len(d.tmpl.b) > 0
		if _, ok := d.replay(c.chunk); !ok {
			replayed = false
			d.fastChunk(c.chunk)
		}
		values := len(d.tmpl.steps) + len(d.tmpl.counts)
		if replayed != c.replayed || values != c.values || d.c.Usage.CandidatesTokenCount != c.candidates {
			t.Errorf("chunk %d: replayed %v, %d steps and counts, %+v; want %v, %d, %d candidates",
				i, replayed, values, d.c.Usage, c.replayed, c.values, c.candidates)
		}
		checkFastAgreesAfter(t, c.chunk, counts("12", "35", "358"), counts("12", "36", "359"))
	}
}

// A count of more than 8 digits is read and copied by countHole.read, not
// as a word; a replay reads it, and rejects a leading zero or a byte that
// is not a digit in it as readChunk's reading does.
func TestReplayLongCounts(t *testing.T) {
	chunk := func(total string) []byte {
		return []byte(strings.Replace(fastText, `"totalTokenCount": 358`, `"totalTokenCount": `+total, 1))
	}
	var d StreamDecoder
	d.fastChunk(chunk("1234567890"))
	for _, c := range []struct {
		total    string
		replayed bool
	}{
		{"1234567891", true},
		{"9999999999", true},
		{"0234567891", false}, // a leading zero: readChunk's reading rejects it, and so does fastChunk
		{"12345678x1", false},
		{"123456789", false}, // a digit fewer: read in full
	} {
		_, ok := d.replay(chunk(c.total))
		if ok != c.replayed {
			t.Errorf("total %s: replayed %v, want %v", c.total, ok, c.replayed)
		}
		checkFastAgreesAfter(t, chunk(c.total), chunk("1234567890"), chunk("1234567891"))
		d.fastChunk(chunk("1234567890")) // the template again
	}
}

// A count read as a word is checked as readChunk reads it, and so are the
// template's bytes in the word before it, which the replay copies back
// into the step it compares: a leading zero, and a byte changed in the key
// or the colon before a count that changes (read, not fixed), fail the
// replay, and readChunk reads those chunks as fastChunk does.
func TestReplayChecksWordCounts(t *testing.T) {
	chunk := func(candidates string) []byte {
		return []byte(strings.Replace(fastText, `"candidatesTokenCount": 35`, candidates, 1))
	}
	template, learn := chunk(`"candidatesTokenCount": 35`), chunk(`"candidatesTokenCount": 36`)
	for _, c := range []struct {
		candidates string
		replayed   bool
	}{
		{`"candidatesTokenCount": 37`, true},
		{`"candidatesTokenCount": 03`, false}, // readChunk rejects a leading zero
		{`"candidatesTokenCounx": 37`, false}, // an unknown key: readChunk reads no count
		{`"candidatesTokenCount"; 37`, false},
		{`"candidatesTokenCount":\t37`, false},
	} {
		var d StreamDecoder
		fastChunkOrReplay(&d, template)
		fastChunkOrReplay(&d, learn) // the first replay: the count changed, it stays read
		if cs := d.tmpl.counts; !d.tmpl.learnt || len(cs) != 1 || cs[0].kind != holeCandidates || !cs[0].word {
			t.Fatalf("the template does not read candidatesTokenCount alone, as a word: %+v", cs)
		}
		if _, ok := d.replay(chunk(c.candidates)); ok != c.replayed {
			t.Errorf("%s: replayed %v, want %v", c.candidates, ok, c.replayed)
		}
		checkFastAgreesAfter(t, chunk(c.candidates), template, learn)
	}
}

// The fast path must take the common chunks, and the replay those that
// follow one of the same shape, or it quietly stops paying.
func TestFastChunkCoverage(t *testing.T) {
	var d StreamDecoder
	if _, ok := d.fastChunk([]byte(fastText)); !ok {
		t.Fatal("the fast path declines a text chunk")
	}
	next := strings.NewReplacer(`"hi"`, `"more \u003c text"`, `35`, `36`, `358`, `359`).Replace(fastText)
	if n, ok := d.replay([]byte(next)); !ok || n != 1 || d.fastParts[0].text != "more < text" || d.c.Usage.CandidatesTokenCount != 36 {
		t.Fatalf("the replay declines the next text chunk: %v %+v", ok, d.c)
	}
	total, fast := 0, 0
	for _, p := range []string{"../testdata/wire/gemini/stream_sse_text.sse", "testdata/stream/max_tokens.sse", "../testdata/in/gemini/stream_thinking_text.sse"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d StreamDecoder
		for len(b) > 0 {
			n := sse.Next(b)
			if n == 0 {
				break
			}
			data := sse.AppendData(nil, b[:n])
			b = b[n:]
			if !strings.Contains(string(data), `"text"`) || strings.Contains(string(data), `"functionCall"`) {
				continue
			}
			total++
			if _, ok := fastChunkOrReplay(&d, data); ok {
				fast++
			}
		}
	}
	if total == 0 || fast != total {
		t.Errorf("fast path took %d of %d text chunks", fast, total)
	}
}

// A text delta the fast path reads is marked Plain when its text is one
// rawjson.AppendString writes as it is, escaped on the wire or not, read
// in full or by the replay; others are not.
func TestTextDeltaPlain(t *testing.T) {
	cases := []struct {
		wire  string // the text as the chunk spells it
		plain bool
	}{
		{`"plain ASCII text"`, true},
		{`"14 °C, 東京 😀"`, true},
		{`"temperature \u003c 10 °C"`, true}, // an escape of a byte that needs none
		{`"\ud83d\ude00 and \ud800"`, true},  // a pair, and a lone surrogate's U+FFFD
		{`"a \"quote\""`, false},
		{`"line\nbreak"`, false},
		{`"back\\slash"`, false},
		{`"\u001f"`, false},
		{"\"invalid \xff UTF-8\"", false},
		{"\"invalid \xff and \\u003c\"", true}, // unescaped, the byte is U+FFFD
		{"\"cut \xc3\"", false},
	}
	for i, c := range cases {
		var d StreamDecoder
		chunk := strings.Replace(fastText, `"hi"`, c.wire, 1)
		for _, from := range []string{"read in full", "replayed"} {
			events, err := d.Decode(nil, nil, []byte(chunk))
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			e := events[len(events)-1]
			if e.Kind != codec.EventDelta || e.Plain != c.plain {
				t.Errorf("case %d %s, %s: %+v, want Plain %v", i, from, c.wire, e, c.plain)
			}
			if e.Plain && string(rawjson.AppendString(nil, e.Text)) != `"`+e.Text+`"` {
				t.Errorf("case %d %s: %q marked plain needs escaping", i, from, e.Text)
			}
		}
	}
}

// The black-box fuzz target in fuzz/ compares the decoder against itself
// on each chunk with an unknown key added, counting on the fast path to
// decline unknown keys (and readChunk to skip them).
func TestFastChunkDeclinesUnknownKeys(t *testing.T) {
	for _, s := range []string{
		`{"rosettaSlow":0,` + fastText[1:],
		fastText[:len(fastText)-1] + `,"rosettaSlow":0}`,
	} {
		var d StreamDecoder
		d.fastChunk([]byte(fastText))
		if _, ok := d.fastChunk([]byte(s)); ok {
			t.Errorf("the fast path takes %q", s)
		}
		if _, ok := slowRead([]byte(s)); !ok {
			t.Errorf("readChunk rejects %q", s)
		}
	}
}

func FuzzFastChunk(f *testing.F) {
	for _, c := range geminiChunks(f) {
		f.Add(c, []byte(fastText))
		f.Add(c, c) // data mutated from its template
	}
	f.Fuzz(func(t *testing.T, data, prime []byte) {
		checkFastAgrees(t, nil, data)
		checkFastAgrees(t, prime, data)
		checkFastAgrees(t, data, data)
		// A template that learnt from a chunk whose counts all changed still
		// reads them: the replay's reading of counts is fuzzed too.
		checkFastAgreesAfter(t, data, prime, bumpCounts(prime))
		checkFastAgreesAfter(t, prime, data, bumpCounts(data))
	})
}

// bumpCounts returns a copy of chunk with the last digit of every number
// outside its strings changed (a 9 to 8, others up by one): the same
// shape, every count another of as many digits.
func bumpCounts(chunk []byte) []byte {
	b := append([]byte(nil), chunk...)
	inString := false
	for i, c := range b {
		switch {
		case inString:
			inString = c != '"' || escaped(b[:i])
		case c == '"':
			inString = true
		case '0' <= c && c <= '9' && (i+1 == len(b) || b[i+1] < '0' || b[i+1] > '9'):
			b[i] = "1234567898"[c-'0']
		}
	}
	return b
}

// escaped says whether the byte after b is escaped: b ends with an odd
// number of backslashes.
func escaped(b []byte) bool {
	n := len(b) - len(bytes.TrimRight(b, `\`))
	return n%2 == 1
}

// countOfLen, for counts the replay does not read as a word, reads what
// readCount reads of a count of the template's length, at every length,
// and declines every byte that is not a digit in every place, and a
// leading zero.
func TestCountOfLen(t *testing.T) {
	eachCount(t, 15, func(b []byte, i, n int) (int, bool) { return countOfLen(b, i, n) })
}

// wordDigits and sumDigits8 read what readCount reads of a count of up to
// 8 digits from the word that ends with it, whatever the bytes before it
// in the word (which the replay masks off).
func TestWordDigits(t *testing.T) {
	eachCount(t, 8, func(b []byte, i, n int) (int, bool) {
		w, ok := wordDigits(rawjson.Word(b, i+n-8)&digitsMask[n], int32(n))
		return sumDigits8(w), ok
	})
}

// eachCount checks read(b, i, n), a count of n digits at b[i], against
// readCount, for n up to most: digits, a digit fewer or more, a leading
// zero, and every byte in every place from 8 before the count's end.
func eachCount(t *testing.T, most int, read func(b []byte, i, n int) (int, bool)) {
	check := func(b []byte, i, n int) {
		t.Helper()
		got, ok := read(b, i, n)
		want, end := readCount(b, i)
		if wantOK := end == i+n; ok != wantOK || ok && got != want {
			t.Fatalf("%q, %d digits: %d, %v; readCount %d, %d", b, n, got, ok, want, end)
		}
	}
	const key = `"totalTokenCount":`
	for n := 1; n <= most; n++ {
		for _, v := range []string{"1", "9", "10", "0", "123456789012345"} {
			for len(v) < n {
				v += v[len(v)-1:]
			}
			for _, tail := range []string{",", `,"totalTokenCount": 1}`} {
				b := []byte(key + v[:n] + tail)
				i := len(key)
				check(b, i, n)
				for pos := min(i, i+n-8); pos < i+n; pos++ {
					for c := range 256 {
						b := append([]byte(nil), b...)
						b[pos] = byte(c)
						check(b, i, n)
					}
				}
			}
		}
	}
}
