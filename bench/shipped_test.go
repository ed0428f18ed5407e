package main

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestShipped runs the shipped binary briefly, not pinned (so it needs no
// CPUs of its own and runs by default): built from the tree, started with
// the harness's configuration in front of the mock, it answers streamed and
// non-streamed requests with 200, its CPU is read from its own process, and
// it writes a usage row per request into its SQLite file. It never skips:
// what it needs (the go command, a writable temporary directory) is there
// wherever the tests run.
func TestShipped(t *testing.T) {
	sh, err := buildShipped()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.remove)
	if fi, err := os.Stat(sh.bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("go build made no executable %s: %v", sh.bin, err)
	}
	m, err := startMock("fasthttp", 5, 0, upstreamKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.close)
	err = sh.start(m.addr, -1)
	if sh.proc != nil {
		t.Cleanup(sh.proc.stop) // before the directory goes: cleanups run last first
	}
	if err != nil {
		t.Fatal(err)
	}

	o, err := parseFlags([]string{"-placement", "split"})
	if err != nil {
		t.Fatal(err)
	}
	if o.gateway != "shipped" || o.conv.name != "long" {
		t.Fatalf("split placement's defaults: -gateway %q -body %q, want shipped and long", o.gateway, o.conv.name)
	}
	e := &env{mockAddr: m.addr, gwAddr: sh.addr}
	cpu0 := procTimesOf([]int{sh.proc.pid()})
	var requests int64
	for _, stream := range []bool{false, true} {
		_, gateway := e.targets(o, modeOf(stream))
		status, _, body, err := probe(gateway)
		if err != nil || status != 200 {
			t.Fatalf("stream=%v: status %d, err %v: %.500s%s", stream, status, err, body, sh.logTail())
		}
		if stream {
			checkEvents(t, body, directModel, false)
		} else if got := string(modelOf(body)); got != directModel {
			t.Errorf("non-stream answer's model = %q, want %q", got, directModel)
		}
		res := load(gateway, runSpec{conns: 4, warmup: 100 * time.Millisecond, dur: 300 * time.Millisecond})
		if res.failed() || res.requests == 0 {
			t.Fatalf("stream=%v: %d requests, %d errors, %d non-200: %s", stream, res.requests, res.errors, res.non200, res.firstError)
		}
		requests += int64(res.requests) + 1 // the probe's
	}
	if runtime.GOOS == "linux" {
		if d := procTimesOf([]int{sh.proc.pid()}).sub(cpu0); d.cpu <= 0 {
			t.Errorf("the shipped binary's CPU from /proc/%d/stat did not grow: %v", sh.proc.pid(), d.cpu)
		}
	}

	// The rows are written every second (usage_flush's default), and all at
	// SIGTERM.
	sh.proc.stop()
	if !sh.proc.exited() {
		t.Fatal("rosetta did not stop on SIGTERM")
	}
	all, ok, err := sh.usageRows()
	if err != nil {
		t.Fatal(err)
	}
	if ok < requests || all != ok {
		t.Errorf("usage_log has %d rows, %d with status 200; want at least the %d requests answered, all 200", all, ok, requests)
	}
	if sh.logSize() == 0 {
		t.Errorf("rosetta wrote no log to %s", sh.log)
	}
	b, _ := os.ReadFile(sh.log)
	if !strings.Contains(string(b), `"msg":"rosetta is serving"`) {
		t.Errorf("rosetta's log lacks its start line:\n%s", tail(b, 1000))
	}
}

// TestBodies: the long conversation is a chat client's request of 1-4 KB
// with more turns than the short one, in both client styles.
func TestBodies(t *testing.T) {
	for _, c := range []conversation{shortConv, longConv} {
		for _, b := range [][]byte{chatBodyOf(c, directModel, true, true), messagesBodyOf(c, directModel, true)} {
			if !json.Valid(b) {
				t.Errorf("%s: not JSON: %s", c.name, b)
			}
		}
		if n := strings.Count(c.turns, `"role":`); n != c.nturns {
			t.Errorf("%s: %d turns, says %d", c.name, n, c.nturns)
		}
	}
	if n := len(chatBodyOf(longConv, directModel, false, false)); n < 2048 || n > 4096 {
		t.Errorf("long body is %d B, want 2-4 KB", n)
	}
	if n := len(chatBody(directModel, false, false)); n < 1000 {
		t.Errorf("short body is %d B, want the 1 KB it was", n)
	}
}

// TestParseWrk reads wrk 4.1's output, and flags the run's failures.
func TestParseWrk(t *testing.T) {
	out := `Running 3s test @ http://127.0.0.1:41234/v1/chat/completions
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.21ms  512.00us  21.43ms   91.20%
    Req/Sec    19.93k     1.02k   21.10k    80.00%
  Latency Distribution
     50%    3.10ms
     75%    3.40ms
     90%    3.80ms
     99%    5.02ms
  59512 requests in 3.00s, 120.12MB read
  Non-2xx or 3xx responses: 3
  Socket errors: connect 0, read 2, write 0, timeout 1
Requests/sec:  19830.51
Transfer/sec:     40.03MB
`
	f, err := parseWrk([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := wrkFigures{rps: 19830.51, p50: 3100 * time.Microsecond, p99: 5020 * time.Microsecond, max: 21430 * time.Microsecond,
		requests: 59512, non2xx: 3, readErr: 2, timeouts: 1, duration: 3 * time.Second}
	if *f != want {
		t.Errorf("parsed %+v\nwant   %+v", *f, want)
	}
	if _, err := parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); err == nil {
		t.Error("wrk's failure parsed")
	}
	if got := wrkScript(target{addr: "x", auth: "sk-a\"b", stream: true}, "/tmp/b.json"); !strings.Contains(got, `wrk.headers["Authorization"] = "Bearer sk-a\"b"`) ||
		!strings.Contains(got, `wrk.headers["Accept"] = "text/event-stream"`) || !strings.Contains(got, `io.open("/tmp/b.json", "rb")`) {
		t.Errorf("script:\n%s", got)
	}
	if wrkSeconds(300*time.Millisecond) != 1 || wrkSeconds(3*time.Second) != 3 || wrkSeconds(0) != 1 {
		t.Error("wrkSeconds")
	}
}

// TestGatewayFlags: what serves as the gateway, the request and the load
// generator, by placement.
func TestGatewayFlags(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil || o.gateway != "inprocess" || o.conv.name != "short" || o.load != "builtin" {
		t.Errorf("shared placement's defaults: %q %q %q, %v", o.gateway, o.conv.name, o.load, err)
	}
	o, err = parseFlags([]string{"-placement", "split", "-gateway", "inprocess", "-body", "short", "-load", "wrk"})
	if err != nil || o.gateway != "inprocess" || o.conv.name != "short" || o.load != "wrk" {
		t.Errorf("split placement, named: %q %q %q, %v", o.gateway, o.conv.name, o.load, err)
	}
	for _, bad := range [][]string{{"-gateway", "shipped"}, {"-load", "wrk"}, {"-placement", "split", "-gateway", "x"},
		{"-placement", "split", "-body", "x"}, {"-placement", "split", "-load", "ab"}, {"-placement", "split", "-load", "wrk", "-rate", "100"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var report strings.Builder
	printReport(&report, o, nil)
	if !strings.Contains(report.String(), "| in-process gw req/s |") || !strings.Contains(report.String(), "WITHOUT a store") {
		t.Errorf("the in-process gateway's report does not say so:\n%s", report.String())
	}
}

// TestServingLine: the address of a binary that prints no banner (older
// revisions, in -baseline, print it in demo mode only) comes from its
// log's start line, JSON or text.
func TestServingLine(t *testing.T) {
	for _, line := range []string{
		`{"time":"2026-11-25T15:47:35Z","level":"INFO","msg":"rosetta is serving","version":"dev","listen":"127.0.0.1:34629","config":"rosetta.yaml","channels":1}`,
		`time=2026-11-25T15:47:35Z level=INFO msg="rosetta is serving" version=dev listen=127.0.0.1:34629 config=rosetta.yaml`,
	} {
		log := `{"level":"INFO","msg":"store opened","listen":"no"}` + "\n" + line + "\n"
		if m := servingRE.FindStringSubmatch(log); m == nil || m[1] != "127.0.0.1:34629" {
			t.Errorf("%s: found %q", line, m)
		}
	}
	if servingRE.MatchString(`{"msg":"cannot listen","listen":"127.0.0.1:1"}`) {
		t.Error("a line that is not the start line matched")
	}
}
