package codec_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/responses"
	"github.com/rosetta-gateway/rosetta/codec/sse"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// Golden files of every ordered pair of styles, in testdata/<from>_to_<to>/:
// "from" is the client's style, "to" the upstream's. Inputs are shared by
// the pairs that need them:
//
//	client request   testdata/in/<from>/request_<case>.json  → request_<case>.json (the upstream's body)
//	                                                            and request_<case>.dropped.json
//	upstream answer  testdata/in/<to>/response_<case>.json   → response_<case>.json (the client's body)
//	upstream stream  testdata/in/<to>/stream_<case>.sse      → stream_<case>.sse (the client's stream)
//	                                                            and, for Gemini clients, stream_<case>.array.json
//	upstream error   testdata/in/<to>/error_<status>_<case>.json → error_<status>_<case>.json
//	embeddings       testdata/in/<from>/embed_request_<case>.json → embed_request_<case>.json (and .dropped.json),
//	                 testdata/in/<to>/embed_response_<case>.json → embed_response_<case><shape>.json, for each
//	                                                            shape the client may ask its vectors in
//	                                                            (pairs of styles that both embed)
//
// The provider fixtures of testdata/wire/<style>/ are inputs too, named
// <surface>_wire_<rest of the file name>. Everything goes through the
// dialects as the proxy wires them: each style's codec.Dialect, and
// codec.Transcoder for streams. go test ./codec -run Pairs -update rewrites the goldens:
// read every one it rewrites against the client style's official SDK.

// style is one API style as the proxy wires it: its codec.Dialect, with
// what a proxy exchange gives it.
type style struct {
	codec.Dialect
	opts codec.Options
	// decodeDropped, when set, also names what decoding a client's request
	// drops (OpenAI's decoder reports it).
	decodeDropped func(body []byte, r *codec.Request) ([]string, *codec.Error)
	// info is what the proxy gives the style's encoders as a client's
	// style (proxy/respond.go streamInfo): request id rosetta0001, an
	// estimate of 42 prompt tokens.
	info codec.StreamInfo
	// model is the model a channel of the style maps the request to.
	model func(r *codec.Request) string
	// wire names the prefixes of the wire fixtures of each surface.
	wire map[string][]string
	// array, when set, is the style's other stream framing (Gemini's
	// streamGenerateContent without alt=sse: one JSON array).
	array codec.Framing
	// embedShapes are the forms a client of the style may ask its
	// vectors in, by the suffix of their goldens ("" the default).
	embedShapes map[string]codec.Embed
	// clientOnly: no channel speaks the style (Responses), so it is never
	// "to", and its answers are checked by its own package's tests (with
	// the official SDK's types) rather than read back by the style.
	// Its inputs and goldens live in root, testdata by default.
	clientOnly bool
	root       string
}

// testdata is where the style's inputs (in/<style>/) and its pairs'
// goldens are.
func (s *style) testdata() string {
	if s.root != "" {
		return s.root
	}
	return "testdata"
}

func (s *style) name() string { return s.Name() }

func (s *style) decodeRequest(op codec.Op, b []byte, r *codec.Request) ([]string, *codec.Error) {
	if s.decodeDropped != nil && op == codec.OpGenerate {
		return s.decodeDropped(b, r)
	}
	return nil, s.DecodeRequest(op, b, r, s.opts)
}

// embeds reports whether r is an embeddings request.
func embeds(r *codec.Request) bool { return len(r.Embed.Texts)+len(r.Embed.Tokens) > 0 }

var styles = []*style{{
	Dialect: openai.Dialect,
	decodeDropped: func(b []byte, r *codec.Request) ([]string, *codec.Error) {
		return openai.DecodeRequestDropped(b, r, nil)
	},
	info: codec.StreamInfo{ID: "chatcmpl-rosetta0001", Model: "public-model", Created: 1795252445, IncludeUsage: true, InputTokens: 42},
	// A channel serves thinking requests with a reasoning model.
	model: func(r *codec.Request) string {
		switch {
		case embeds(r):
			return "text-embedding-3-small"
		case r.Thinking.Enabled:
			return "gpt-5-mini"
		}
		return "gpt-4.1-mini"
	},
	wire:        map[string][]string{"request": {"chat_request_"}, "response": {"chat_response_"}, "stream": {"chat_stream_"}, "error": {"error_"}},
	embedShapes: map[string]codec.Embed{"": {}, ".base64": {Base64: true}},
}, {
	Dialect: anthropic.Dialect,
	opts:    codec.Options{Version: anthropic.Version20230601},
	info:    codec.StreamInfo{ID: "msg_rosetta0001", Model: "public-model", Created: 1795252445, InputTokens: 42},
	model:   func(*codec.Request) string { return "claude-sonnet-4-6" },
	wire:    map[string][]string{"request": {"messages_request_"}, "response": {"messages_response_"}, "stream": {"messages_stream_"}, "error": {"error_"}},
}, {
	Dialect: gemini.Dialect,
	info:    codec.StreamInfo{ID: "rosetta0001", Model: "public-model", Created: 1795252445, InputTokens: 42},
	model: func(r *codec.Request) string {
		if embeds(r) {
			return "gemini-embedding-001"
		}
		return "gemini-2.5-flash"
	},
	// Gemini upstreams are always asked for SSE (gemini.AppendPath).
	wire:        map[string][]string{"request": {"generate_request_"}, "response": {"generate_response_", "response_"}, "stream": {"stream_sse_"}, "error": {"error_"}},
	array:       gemini.Framing(true),
	embedShapes: map[string]codec.Embed{"": {}, ".single": {Single: true}},
}, {
	Dialect: responses.Dialect,
	decodeDropped: func(b []byte, r *codec.Request) ([]string, *codec.Error) {
		return responses.DecodeRequestDropped(b, r, nil)
	},
	info:       codec.StreamInfo{ID: "resp_rosetta0001", Model: "public-model", Created: 1795252445, IncludeUsage: true, InputTokens: 42},
	clientOnly: true,
	root:       filepath.Join("responses", "testdata"),
}}

// pair is an ordered pair of different styles and its golden directory.
type pair struct {
	from, to *style
	dir      string
}

// info is what the proxy gives the client style's encoders for a
// response from the upstream style (proxy/respond.go streamInfo).
func (p pair) info() codec.StreamInfo {
	info := p.from.info
	info.Origin = p.to.name()
	return info
}

func pairs() []pair {
	var ps []pair
	for _, from := range styles {
		for _, to := range styles {
			if from != to && !to.clientOnly {
				ps = append(ps, pair{from, to, filepath.Join(from.testdata(), from.name()+"_to_"+to.name())})
			}
		}
	}
	return ps
}

// input is one input file of a surface and the base name of its goldens.
type input struct{ name, path string }

// inputs lists the inputs of a style's surface: testdata/in/<style>/ and
// the style's wire fixtures.
func inputs(t *testing.T, s *style, surface string) []input {
	t.Helper()
	var ins []input
	paths, _ := filepath.Glob(filepath.Join(s.testdata(), "in", s.name(), surface+"_*"))
	for _, p := range paths {
		ins = append(ins, input{strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)), p})
	}
	for _, prefix := range s.wire[surface] {
		paths, _ := filepath.Glob(filepath.Join("testdata", "wire", s.name(), prefix+"*"))
		for _, p := range paths {
			rest := strings.TrimPrefix(filepath.Base(p), prefix)
			ins = append(ins, input{surface + "_wire_" + strings.TrimSuffix(rest, filepath.Ext(rest)), p})
		}
	}
	if len(ins) == 0 {
		t.Fatalf("no %s inputs for %s", surface, s.name())
	}
	return ins
}

func TestPairsGolden(t *testing.T) {
	for _, p := range pairs() {
		t.Run(filepath.Base(p.dir), func(t *testing.T) {
			if goldentest.Updating() {
				if err := os.MkdirAll(p.dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			written := map[string]bool{}
			check := func(t *testing.T, name string, got []byte) {
				t.Helper()
				written[name] = true
				goldentest.Check(t, filepath.Join(p.dir, name), got)
			}
			for _, in := range inputs(t, p.from, "request") {
				t.Run(in.name, func(t *testing.T) { p.request(t, codec.OpGenerate, in, check) })
			}
			for _, in := range inputs(t, p.to, "response") {
				t.Run(in.name, func(t *testing.T) { p.response(t, codec.OpGenerate, in, "", p.info(), check) })
			}
			if codec.Serves(p.from, codec.OpEmbed) && codec.Serves(p.to, codec.OpEmbed) {
				for _, in := range inputs(t, p.from, "embed_request") {
					t.Run(in.name, func(t *testing.T) { p.request(t, codec.OpEmbed, in, check) })
				}
				for _, in := range inputs(t, p.to, "embed_response") {
					for suffix, shape := range p.from.embedShapes {
						info := p.info()
						info.Request = &codec.Request{Embed: shape}
						t.Run(in.name+suffix, func(t *testing.T) { p.response(t, codec.OpEmbed, in, suffix, info, check) })
					}
				}
			}
			for _, in := range inputs(t, p.to, "stream") {
				t.Run(in.name, func(t *testing.T) { p.stream(t, in, check) })
			}
			for _, in := range inputs(t, p.to, "error") {
				t.Run(in.name, func(t *testing.T) { p.errorBody(t, in, check) })
			}
			checkNoStrays(t, p.dir, written)
		})
	}
}

// checkNoStrays fails on files of dir that no case produced (or removes
// them with -update).
func checkNoStrays(t *testing.T, dir string, written map[string]bool) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !written[e.Name()] {
			goldentest.CheckAbsent(t, filepath.Join(dir, e.Name()))
		}
	}
}

type checkFunc func(t *testing.T, name string, got []byte)

// request translates a client's request for op into the upstream's, as
// proxy/forward.go upstreamBody does.
func (p pair) request(t *testing.T, op codec.Op, in input, check checkFunc) {
	var r codec.Request
	var drops goldentest.Dropped
	var err *codec.Error
	if drops.Decode, err = p.from.decodeRequest(op, goldentest.Read(t, in.path), &r); err != nil {
		t.Fatalf("%s.DecodeRequest: %v", p.from.name(), err)
	}
	r.Model = p.to.model(&r)
	out, encDrops, err := p.to.AppendRequest(op, nil, &r, p.to.opts)
	if err != nil {
		// A request the upstream's style cannot take: the client gets a
		// 400 in its own style, which is the golden.
		check(t, in.name+".error.json", goldentest.IndentJSON(t, p.from.AppendError(nil, err)))
		return
	}
	drops.Encode = encDrops
	check(t, in.name+".json", goldentest.IndentJSON(t, out))
	if d := goldentest.DumpDropped(t, drops); d != nil {
		check(t, in.name+".dropped.json", d)
	}
	var again codec.Request
	if _, err := p.to.decodeRequest(op, out, &again); err != nil {
		t.Errorf("the upstream request is not one a %s client could send: %v", p.to.name(), err)
	}
}

// response translates an upstream's whole answer to op into the client's,
// given info, into the golden named for the input and suffix.
func (p pair) response(t *testing.T, op codec.Op, in input, suffix string, info codec.StreamInfo, check checkFunc) {
	var r codec.Response
	if err := p.to.DecodeResponse(op, goldentest.Read(t, in.path), &r); err != nil {
		t.Fatalf("%s.DecodeResponse: %v", p.to.name(), err)
	}
	if info.Request != nil && info.Request.Embed.Single && len(r.Vectors) != 1 {
		return // one embedding answers one text
	}
	out := p.from.AppendResponse(op, nil, &r, info)
	check(t, in.name+suffix+".json", goldentest.IndentJSON(t, out))
	if p.from.clientOnly {
		return
	}
	var again codec.Response
	if err := p.from.DecodeResponse(op, out, &again); err != nil {
		t.Errorf("the client's %s answer does not decode: %v", p.from.name(), err)
	}
}

// stream transcodes an upstream's stream into the client's.
func (p pair) stream(t *testing.T, in input, check checkFunc) {
	b := goldentest.Read(t, in.path)
	out := newTranscoder(p, nil).Run(t, b)
	check(t, in.name+".sse", out)
	if !p.from.clientOnly {
		checkClientStream(t, p.from, out)
	}
	if p.from.array != nil {
		arr := newTranscoder(p, p.from.array).Run(t, b)
		elems := testutil.JSONArray(t, arr)
		if n := bytes.Count(out, []byte("data: ")); len(elems) != n {
			t.Errorf("the array stream has %d elements, the SSE stream %d events", len(elems), n)
		}
		check(t, in.name+".array.json", arr)
	}
}

// checkClientStream checks that the client's own stream decoder reads the
// client's stream without error.
func checkClientStream(t *testing.T, s *style, out []byte) {
	t.Helper()
	d := s.NewStreamDecoder()
	var events []codec.Event
	for b := out; len(b) > 0; {
		n := sse.Next(b)
		if n == 0 {
			t.Fatalf("the client's stream ends in an unterminated event: %q", b)
		}
		if data, _, ok := sse.Data(b[:n]); ok {
			name, _ := sse.Field(b[:n], "event")
			var err error
			if events, err = d.Decode(events[:0], name, data); err != nil {
				t.Fatalf("the client's %s decoder rejects %q: %v", s.name(), b[:n], err)
			}
		}
		b = b[n:]
	}
}

// errorBody translates an upstream's error body (its status is in the file
// name: error_<status>…) into the client's, as proxy/errors.go does but for
// its rewriting of 401 and 403, which is the proxy's policy.
func (p pair) errorBody(t *testing.T, in input, check checkFunc) {
	digits, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(in.name, "error_"), "wire_"), "_")
	status, err := strconv.Atoi(digits)
	if err != nil {
		t.Fatalf("%s: no status in the name", in.path)
	}
	e, ok := p.to.DecodeError(status, goldentest.Read(t, in.path))
	if !ok {
		t.Fatalf("%s.DecodeError: not an error body", p.to.name())
	}
	e.Type = "" // the upstream's type means nothing to another style
	if e.Status != status {
		t.Errorf("status %d became %d", status, e.Status)
	}
	check(t, in.name+".json", goldentest.IndentJSON(t, p.from.AppendError(nil, &e)))
}

// newTranscoder returns the pair's transcoder, the proxy relay's: the
// upstream's decoder, the client's encoder, in the given framing (nil for
// SSE).
func newTranscoder(p pair, f codec.Framing) *goldentest.Transcoder {
	tc := &goldentest.Transcoder{Dec: p.to.NewStreamDecoder(), Enc: p.from.NewStreamEncoder(), Info: p.info(), Framing: f}
	tc.Reset()
	return tc
}

// Read boundaries. The transcoder's decoder and encoder see only the events
// the framing hands them, so the client's stream is the same for every
// split of the upstream bytes when (1) the framing hands over the same
// events, byte for byte, whatever the reads, and (2) nothing keeps pointing
// into an event's bytes after it is transcoded (later reads overwrite the
// relay's buffer). TestPairsStreamFraming checks (1) at every split point
// of every upstream stream, two reads and one byte per read;
// TestPairsStreamSplits checks (2), and runs the whole transcoder at the
// split points next to line endings (where framing decides) and one byte
// per read, comparing with the golden client stream. Transcoding at every
// split point would cost some 80,000 transcoded streams, a minute under the
// race detector.

// TestPairsStreamFraming: every split point of every upstream stream hands
// the decoder the same events as a single read.
func TestPairsStreamFraming(t *testing.T) {
	for _, s := range styles {
		if s.clientOnly {
			continue // it has no upstream streams
		}
		for _, in := range inputs(t, s, "stream") {
			t.Run(s.name()+"/"+in.name, func(t *testing.T) {
				b := goldentest.Read(t, in.path)
				c := framingCheck{t: t}
				c.rec.Handle = c.record
				c.tc = goldentest.NewTranscoder(&c.rec, goldentest.NopEncoder{}, codec.StreamInfo{})
				c.tc.Write(b)
				c.tc.Close()
				c.rec.Handle = c.compare
				c.run("one byte per read", goldentest.Bytewise(b)...)
				for i := 1; i < len(b); i++ {
					c.run("split at byte "+strconv.Itoa(i), b[:i], b[i:])
				}
			})
		}
	}
}

// framingCheck compares the events framed from reads with those of a
// single read, reusing one transcoder whose decoder records them.
type framingCheck struct {
	t    *testing.T
	rec  goldentest.Recorder
	tc   *goldentest.Transcoder
	want [][2][]byte
	k    int    // events compared so far
	how  string // the reads, for messages
}

func (c *framingCheck) record(name, data []byte) {
	c.want = append(c.want, [2][]byte{slices.Clone(name), slices.Clone(data)})
}

func (c *framingCheck) compare(name, data []byte) {
	if c.k >= len(c.want) || !bytes.Equal(name, c.want[c.k][0]) || !bytes.Equal(data, c.want[c.k][1]) {
		c.t.Fatalf("%s: event %d is %q %q", c.how, c.k, name, data)
	}
	c.k++
}

func (c *framingCheck) run(how string, reads ...[]byte) {
	c.how, c.k = how, 0
	c.tc.Reset()
	for _, r := range reads {
		c.tc.Write(r)
	}
	if c.tc.Close(); c.k != len(c.want) {
		c.t.Fatalf("%s: %d events, want %d", how, c.k, len(c.want))
	}
}

// TestPairsStreamSplits runs each pair's transcoder on its upstream streams
// split next to every line ending, one byte per read, and with each event's
// bytes overwritten once transcoded: the client's stream must be the golden
// one. One transcoder per stream is reset and reused.
func TestPairsStreamSplits(t *testing.T) {
	for _, p := range pairs() {
		for _, in := range inputs(t, p.to, "stream") {
			t.Run(filepath.Base(p.dir)+"/"+in.name, func(t *testing.T) {
				b := goldentest.Read(t, in.path)
				want := goldentest.Read(t, filepath.Join(p.dir, in.name+".sse"))
				tc := newTranscoder(p, nil)
				check := func(how string, reads ...[]byte) {
					t.Helper()
					if got := tc.Run(t, reads...); !bytes.Equal(got, want) {
						t.Fatalf("%s:\n%s", how, goldentest.DiffLines(want, got))
					}
				}
				for i := 1; i < len(b); i++ {
					if nearLineEnd(b, i) {
						check("split at byte "+strconv.Itoa(i), b[:i], b[i:])
					}
				}
				check("one byte per read", goldentest.Bytewise(b)...)
				tc.Poison = true
				check("bytes overwritten once transcoded", slices.Clone(b))
			})
		}
	}
}

// nearLineEnd reports whether a line ending is within two bytes of the
// split point i.
func nearLineEnd(b []byte, i int) bool {
	for _, c := range b[max(0, i-2):min(len(b), i+2)] {
		if c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}
