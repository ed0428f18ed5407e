package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
)

// TestForwardStateRelease: a state handed back holds no channel, whether
// its request had one candidate, several, or the most a route gives.
func TestForwardStateRelease(t *testing.T) {
	ch := &channel{name: "c"}
	for _, n := range []int{0, 1, 3, maxCandidates} {
		st := takeForwardState()
		cands := st.cands[:0]
		for range n {
			cands = append(cands, candidate{ch, "m"})
		}
		st.release()
		if st.cands != (candList{}) {
			t.Errorf("%d candidates: the released list still holds %v", n, st.cands)
		}
	}
}

// BenchmarkForwardState is a request's state taken, one candidate
// appended, and handed back.
func BenchmarkForwardState(b *testing.B) {
	ch := &channel{name: "c"}
	b.ReportAllocs()
	for b.Loop() {
		st := takeForwardState()
		_ = append(st.cands[:0], candidate{ch, "m"})
		st.release()
	}
}

// TestForwardStateKeepsAnswerBuffer: a new state's whole answer keeps its
// body buffer when dropped, for the next answer, from the first attempt
// on; one past maxKeptAnswer goes.
func TestForwardStateKeepsAnswerBuffer(t *testing.T) {
	st := forwardStates.New().(*forwardState)
	for _, size := range []int{1 << 10, maxKeptAnswer + 1} {
		st.resp.SetBody(make([]byte, size))
		st.dropResponse(&st.resp)
		if kept := cap(st.resp.Body()) > 0; kept != (size <= maxKeptAnswer) {
			t.Errorf("a %d-byte answer's buffer kept: %t", size, kept)
		}
	}
}

// TestForwardStateKeepsURI: a request made with a state whose last attempt
// went to the same URL (kept parsed), to another URL after it, or to one
// the channel does not keep (a response's own) is written byte for byte
// as one made with a fresh state.
func TestForwardStateKeepsURI(t *testing.T) {
	g := newBenchGateway(t, benchRequest{}, "http://127.0.0.1:9/v1", "gpt-4o-mini")
	ch := g.table.Load().channels[0]
	body := []byte(`{"model":"gpt-4o-mini","messages":[]}`)
	uriOf := func(op *operation) []byte {
		u, ok := ch.appendURI(nil, op.op, "gpt-4o-mini", false)
		if !ok {
			t.Fatalf("no URL for %s", op.name)
		}
		return u
	}
	chat, embed := uriOf(opGenerate), uriOf(opEmbed)
	write := func(st *forwardState, uri []byte, target string) []byte {
		x := &exchange{op: opGenerate, id: []byte("req_0123456789abcdef01234567"), uri: uri, target: target}
		g.prepare(st, x, ch, body)
		return writeUpstream(t, st)
	}
	fresh := func(uri []byte, target string) []byte {
		st := new(forwardState)
		return write(st, uri, target)
	}
	st := new(forwardState)
	for i, step := range []struct {
		uri    []byte
		target string
		kept   bool // the state holds the URL parsed after the step
	}{
		{chat, "", false}, // the channel parses it for later requests
		{chat, "", true},
		{chat, "", true},
		{embed, "", false},
		{embed, "", true},
		{append(uriOf(opGenerate), "/resp_1"...), "resp_1", false},
		{chat, "", true},
	} {
		got, want := write(st, step.uri, step.target), fresh(step.uri, step.target)
		if !bytes.Equal(got, want) {
			t.Errorf("step %d (%s): wrote\n%s\nwant\n%s", i, step.uri, got, want)
		}
		if st.uriKept != step.kept {
			t.Errorf("step %d (%s): URL kept %t, want %t", i, step.uri, st.uriKept, step.kept)
		}
	}
}

// TestForwardStateKeepsHead: a request made with a state whose last
// attempt had the same head (channel, key, method, accept, body or not)
// and URL keeps the header and sets its request id alone; any other is
// made afresh. Each is written byte for byte as one made with a fresh
// state, whatever came before it: streams and whole answers, media, a
// channel's two keys in turn or pinned, a GET on a response, a body-less
// request, an upload (never kept), and another channel.
func TestForwardStateKeepsHead(t *testing.T) {
	g := newBenchGateway(t, benchRequest{}, "http://127.0.0.1:9/v1", "gpt-4o-mini")
	ch := g.table.Load().channels[0]
	ch.auth = append(ch.auth, oneLine([]byte("Bearer sk-second-0123456789")))
	other := newBenchGateway(t, benchRequest{}, "http://127.0.0.1:9/v1", "gpt-4o-mini").table.Load().channels[0]
	body := []byte(`{"model":"gpt-4o-mini","messages":[]}`)
	upload := []byte("--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--b--\r\n")
	chatURI, _ := ch.appendURI(nil, opGenerate.op, "gpt-4o-mini", false)
	speechURI, _ := ch.appendURI(nil, opSpeech.op, "tts-1", false)
	type step struct {
		ch     *channel
		op     *operation
		stream bool
		key    int
		uri    []byte
		target string
		body   []byte
		upload bool
		kept   bool // the header is kept after the step
	}
	getURI := append(append([]byte(nil), chatURI...), "/resp_1"...)
	steps := []step{
		{ch: ch, op: opGenerate, uri: chatURI, body: body, kept: false}, // the channel parses the URL for later requests
		{ch: ch, op: opGenerate, uri: chatURI, body: body, key: 1, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, key: 1, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, key: 2, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, stream: true, key: 2, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, stream: true, key: 2, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, kept: true}, // keys in turn
		{ch: ch, op: opGenerate, uri: chatURI, body: body, kept: true},
		{ch: ch, op: opSpeech, uri: speechURI, body: body, key: 1, kept: false},
		{ch: ch, op: opSpeech, uri: speechURI, body: body, key: 1, kept: true},
		{ch: ch, op: opGenerate, uri: speechURI, body: nil, key: 1, kept: true},
		{ch: ch, op: opResponseGet, uri: getURI, target: "resp_1", key: 1, kept: false}, // a URL not kept
		{ch: ch, op: opResponseGet, uri: chatURI, key: 1, kept: true},
		{ch: ch, op: opResponseGet, uri: chatURI, key: 1, kept: true},
		{ch: ch, op: opTranscribe, uri: chatURI, body: body, key: 1, kept: true}, // an upload's head, but JSON
		{ch: ch, op: opTranscribe, uri: chatURI, upload: true, key: 1, kept: false},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, key: 1, kept: true},
		{ch: other, op: opGenerate, uri: chatURI, body: body, key: 1, kept: true},
		{ch: ch, op: opGenerate, uri: chatURI, body: body, key: 1, kept: true},
	}
	write := func(st *forwardState, s step, id string) []byte {
		x := &exchange{op: s.op, stream: s.stream, upKey: s.key, id: []byte(id), uri: s.uri, target: s.target}
		if s.upload {
			x.contentType = []byte("multipart/form-data; boundary=b")
			x.upBody, x.upLen = bytes.NewReader(upload), len(upload)
		}
		g.prepare(st, x, s.ch, s.body)
		return writeUpstream(t, st)
	}
	st := new(forwardState)
	for i, s := range steps {
		id := fmt.Sprintf("req_%024d", i)
		next := s.ch.next.Load()
		got := write(st, s, id)
		s.ch.next.Store(next) // the fresh state's request takes the same key in turn
		want := write(new(forwardState), s, id)
		if !bytes.Equal(got, want) {
			t.Errorf("step %d: wrote\n%s\nwant\n%s", i, got, want)
		}
		if st.headKept != (s.kept && PairView()) { // without a view of the pairs, nothing is kept
			t.Errorf("step %d: header kept %t, want %t", i, st.headKept, s.kept)
		}
		if !bytes.Contains(got, []byte("X-Request-Id: "+id+"\r\n")) {
			t.Errorf("step %d: the request id is not %s:\n%s", i, id, got)
		}
	}
}

// TestPostTable: every POST route is found by its path, and a path that is
// none is not, however close.
func TestPostTable(t *testing.T) {
	g := &Gateway{}
	routes := g.postRoutes()
	tab := newPostTable(routes)
	for _, e := range routes {
		if got := tab.find([]byte(e.path)); got.upload != e.route.upload || got.handle == nil {
			t.Errorf("%s: found %+v", e.path, got)
		}
	}
	for _, path := range []string{"", "/", "/v1", "/v1/chat/completion", "/v1/chat/completions/", "/V1/chat/completions",
		"/v1/chat/completionz", "/v1/messages/count_token", "/v1/messages/count_tokens/x/y/z"} {
		if got := tab.find([]byte(path)); got.handle != nil {
			t.Errorf("%q: found a route", path)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a route postIndex does not number made a table")
		}
	}()
	newPostTable(append(routes, postEntry{"/v1/moderations", postRoute{handle: g.chatCompletions}}))
}

// writeUpstream is the upstream request the state holds, as the channel's
// client writes it; the state is then reset for its next request.
func writeUpstream(t *testing.T, st *forwardState) []byte {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := st.req.Write(w); err != nil {
		t.Fatal(err)
	}
	w.Flush() //nolint:errcheck // a bytes.Buffer
	st.resetRequest()
	return out.Bytes()
}
