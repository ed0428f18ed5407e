package proxy

import (
	"bufio"
	"bytes"
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
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		if err := st.req.Write(w); err != nil {
			t.Fatal(err)
		}
		w.Flush() //nolint:errcheck // a bytes.Buffer
		st.resetRequest()
		return out.Bytes()
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
