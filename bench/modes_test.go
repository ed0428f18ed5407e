package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestBare checks the bare pass-through answers in the gateway's place:
// streamed and not, and only with the gateway's key.
func TestBare(t *testing.T) {
	o, e := startChecked(t, "-quick", "-bare")
	if e.bare == nil || e.gw != nil {
		t.Fatal("-bare did not put the bare pass-through in the gateway's place")
	}
	_, gateway := e.targets(o, "stream")
	status, _, body, err := probe(gateway)
	if err != nil || status != 200 {
		t.Fatalf("bare stream: status %d, err %v: %s", status, err, body)
	}
	if n := countEvents(body); n != o.events+3 { // role, content..., finish, [DONE]
		t.Errorf("bare stream has %d events, want %d:\n%s", n, o.events+3, body)
	}
	checkEvents(t, body, directModel, false)
	gateway.auth = "sk-wrong-0123456789abcdef"
	if status, _, _, err = probe(gateway); err != nil || status != 401 {
		t.Errorf("wrong key: status %d, err %v; want 401", status, err)
	}
	if _, err := parseFlags([]string{"-bare", "-mapped"}); err == nil {
		t.Error("-bare -mapped accepted")
	}
}

// TestHold runs hold mode briefly (20 streams for 2 s) with this test
// binary as the gateway process, and as the bare pass-through's; the
// gateway process writes its heap profile.
func TestHold(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hold mode reads /proc: Linux only")
	}
	heap := filepath.Join(t.TempDir(), "heap.pprof")
	for _, bare := range []bool{false, true} {
		args := []string{"-hold", "20", "-hold-for", "2s", "-hold-every", "500ms", "-hold-sample", "1s"}
		title := "(gateway process"
		if bare {
			args, title = append(args, "-bare"), "(**bare fasthttp pass-through** process"
		} else {
			args = append(args, "-hold-heap", heap)
		}
		o, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		var out, progress strings.Builder
		ok, err := runHold(o, o.hold, &out, &progress)
		t.Log("\n" + progress.String() + out.String())
		if err != nil || !ok {
			t.Fatalf("hold (bare %v) failed: ok %v, err %v", bare, ok, err)
		}
		for _, want := range []string{title, "| all open |", "KiB", "20 opened, 0 failed to open, 0 ended during the hold", "flat"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("report (bare %v) lacks %q", bare, want)
			}
		}
	}
	if fi, err := os.Stat(heap); err != nil || fi.Size() == 0 {
		t.Errorf("no heap profile written: %v", err)
	}
}

// TestHoldHeapFailure: a heap profile the gateway process cannot write
// fails the hold, with the reason.
func TestHoldHeapFailure(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hold mode reads /proc: Linux only")
	}
	bad := filepath.Join(t.TempDir(), "missing", "heap.pprof")
	o, err := parseFlags([]string{"-hold", "2", "-hold-for", "1ms", "-hold-every", "100ms", "-hold-heap", bad})
	if err != nil {
		t.Fatal(err)
	}
	var out, progress strings.Builder
	_, err = runHold(o, o.hold, &out, &progress)
	if err == nil || !strings.Contains(err.Error(), "cannot create heap profile") {
		t.Fatalf("hold with an unwritable heap profile: err %v", err)
	}
}

// TestHoldAnswer: the gateway process's answers parse, a collection's
// with or without a profile.
func TestHoldAnswer(t *testing.T) {
	for _, line := range []string{"mem", "gc", "gc " + filepath.Join(t.TempDir(), "heap.pprof")} {
		if a := holdAnswer(line); !strings.HasPrefix(a, "mem ") {
			t.Errorf("%q: answered %q", line, a)
		} else if m, ok := parseMem(a); !ok || m.heapInuse == 0 || m.goroutines == 0 {
			t.Errorf("%q: %q parsed as %+v, %v", line, a, m, ok)
		}
	}
}

// TestDrainHoldSeesTheEnd: a held stream that ends, even with its last
// event split across reads, counts as closed though its connection stays.
func TestDrainHoldSeesTheEnd(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	var open atomic.Int64
	open.Store(1)
	done := make(chan struct{})
	go func() { drainHold(client, &open); close(done) }()
	for _, part := range []string{"data: {}\n\n", strings.Repeat("x", 700), "data: [DO", "NE]\n\n"} {
		if _, err := server.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the stream was not seen")
	}
	if open.Load() != 0 {
		t.Errorf("open = %d", open.Load())
	}
}

// TestAnthropicClient checks -client anthropic: the gateway's client speaks
// the Messages API, and its requests and streams, translated to and from the
// OpenAI mock, come back whole.
func TestAnthropicClient(t *testing.T) {
	o, e := startChecked(t, "-quick", "-client", "anthropic")
	for _, stream := range []bool{false, true} {
		_, gateway := e.targets(o, modeOf(stream))
		status, _, body, err := probe(gateway)
		if err != nil || status != 200 {
			t.Fatalf("stream=%v: status %d, err %v: %s", stream, status, err, body)
		}
		want := `"type":"message"`
		if stream {
			want = "event: message_start\n"
		}
		if !strings.Contains(string(body), want) {
			t.Errorf("stream=%v: not a Messages answer:\n%.400s", stream, body)
		}
	}
	for _, bad := range [][]string{{"-client", "cohere"}, {"-client", "anthropic", "-bare"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestOpenLoop: with -rate, a run sends the rate asked for, not as many
// requests as the servers can answer, and its report gives the latency the
// gateway adds.
func TestOpenLoop(t *testing.T) {
	o, e := startChecked(t, "-quick", "-rate", "300", "-modes", "nonstream", "-c", "4")
	direct, gateway := e.targets(o, "nonstream")
	for _, tg := range []target{direct, gateway} {
		res := load(tg, runSpec{conns: 4, warmup: 200 * time.Millisecond, dur: time.Second, rate: o.rate})
		if res.failed() {
			t.Fatalf("%s: %d errors, %d non-200: %s", tg.name, res.errors, res.non200, res.firstError)
		}
		// 300 a second, give or take the requests in flight at the window's edges.
		if res.requests < 270 || res.requests > 330 {
			t.Errorf("%s: %d requests in 1 s at -rate 300", tg.name, res.requests)
		}
	}
	var progress, out strings.Builder
	rows := runAll(o, e, &progress)
	printReport(&out, o, rows)
	for _, want := range []string{"open loop: 300 requests per second", "| added p50 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := parseFlags([]string{"-rate", "-1"}); err == nil {
		t.Error("-rate -1 accepted")
	}
}

// TestEmbeddingsMode checks -modes embeddings: direct and through the
// gateway, the embeddings of one text come back whole (the gateway's with
// the public model name), run after run without an error; the mode takes
// no client style, pass-through or floor it cannot serve.
func TestEmbeddingsMode(t *testing.T) {
	o, e := startChecked(t, "-quick", "-mapped", "-modes", "embeddings", "-d", "300ms")
	var progress strings.Builder
	rows := runAll(o, e, &progress)
	t.Log("\n" + progress.String())
	if len(rows) != 1 || rows[0].mode != "embeddings" {
		t.Fatalf("got %d rows, want one of embeddings", len(rows))
	}
	for _, x := range rows[0].all() {
		if x.errors > 0 || x.non200 > 0 || x.requests == 0 {
			t.Errorf("%s: %d requests, %d errors, %d non-200; first: %s", x.target, x.requests, x.errors, x.non200, x.firstError)
		}
	}
	direct, gateway := rows[0].of("direct")[0].sample, rows[0].of("gateway")[0].sample
	if want := testutil.EmbeddingAnswer(mappedUpstream, false); !bytes.Equal(direct, want) {
		t.Errorf("direct answer of %d bytes, want the mock's %d", len(direct), len(want))
	}
	if want := testutil.EmbeddingAnswer(mappedPublic, false); !bytes.Equal(gateway, want) {
		t.Errorf("gateway answer:\n%.300s\nwant the mock's with the public name", gateway)
	}
	for _, bad := range [][]string{{"-client", "anthropic"}, {"-bare"}, {"-placement", "split", "-floor"}} {
		if _, err := parseFlags(append([]string{"-modes", "embeddings"}, bad...)); err == nil {
			t.Errorf("-modes embeddings %v accepted", bad)
		}
	}
}
