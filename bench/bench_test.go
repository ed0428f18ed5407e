package main

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestMain lets the test binary serve as the servers process of split
// placement, which the harness starts by re-executing itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], serveRoleFlag) {
		os.Exit(serveMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestQuick runs the harness as -quick -mapped does (c=16, 1 s per case) and
// checks what the numbers rest on: no errors, only 200s, the public model
// name in every gateway response and event, and the gateway's streams
// carrying the direct stream's events minus the usage chunk it strips.
func TestQuick(t *testing.T) {
	o, e := startChecked(t, "-quick", "-mapped")
	var progress strings.Builder
	rows := runAll(o, e, &progress)
	t.Log("\n" + progress.String())
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2 (nonstream and stream at c=16)", len(rows))
	}

	for _, r := range rows {
		for _, x := range append(append([]*result(nil), r.direct...), r.gateway...) {
			if x.errors > 0 || x.non200 > 0 {
				t.Errorf("%s %s: %d errors, %d non-200; first: %s", r.mode, x.target, x.errors, x.non200, x.firstError)
			}
			if x.requests == 0 || len(x.lat) != x.requests {
				t.Errorf("%s %s: %d requests measured, %d latencies", r.mode, x.target, x.requests, len(x.lat))
			}
			if len(x.sample) == 0 {
				t.Errorf("%s %s: no sample response", r.mode, x.target)
			}
		}
	}

	non, str := rows[0], rows[1]
	if got := string(modelOf(non.gateway[0].sample)); got != mappedPublic {
		t.Errorf("gateway response model = %q, want the public name %q", got, mappedPublic)
	}
	if got := string(modelOf(non.direct[0].sample)); got != mappedUpstream {
		t.Errorf("direct response model = %q, want %q", got, mappedUpstream)
	}

	direct, gateway := str.direct[0].sample, str.gateway[0].sample
	nd, ng := countEvents(direct), countEvents(gateway)
	if want := o.events + 4; nd != want { // role, content..., finish, usage, [DONE]
		t.Errorf("direct stream has %d events, want %d:\n%s", nd, want, direct)
	}
	if ng != nd-1 {
		t.Errorf("gateway stream has %d events, want %d (direct minus the usage chunk):\n%s", ng, nd-1, gateway)
	}
	checkEvents(t, gateway, mappedPublic, false)
	checkEvents(t, direct, mappedUpstream, true)
	if s, u := e.mock.streams.Load(), e.mock.withUse.Load(); s == 0 || s != u {
		t.Errorf("mock saw %d streams, %d with include_usage; want all of them", s, u)
	}

	var report strings.Builder
	printReport(&report, o, rows)
	t.Log("\n" + report.String())
	for _, want := range []string{"| nonstream | 16 |", "| stream | 16 |", "GOMAXPROCS="} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(report.String(), "ERRORS") {
		t.Errorf("report flags errors")
	}
}

// checkEvents checks every event of a stream: the model name of each chunk,
// whether a usage-only chunk is there, and the final [DONE].
func checkEvents(t *testing.T, body []byte, model string, usageChunk bool) {
	t.Helper()
	events := bytes.SplitAfter(body, []byte("\n\n"))
	if last := events[len(events)-1]; len(last) != 0 {
		t.Errorf("stream ends with an incomplete event %q", last)
	}
	events = events[:len(events)-1]
	if len(events) == 0 || string(events[len(events)-1]) != "data: [DONE]\n\n" {
		t.Fatalf("stream does not end with data: [DONE]:\n%s", body)
	}
	sawUsage := false
	for _, ev := range events[:len(events)-1] {
		if !bytes.HasPrefix(ev, []byte("data: {")) {
			t.Errorf("event is not a data line with a JSON chunk: %q", ev)
			continue
		}
		if got := string(modelOf(ev)); got != model {
			t.Errorf("event model = %q, want %q: %s", got, model, ev)
		}
		if bytes.Contains(ev, []byte(`"choices":[]`)) {
			sawUsage = true
		}
	}
	if sawUsage != usageChunk {
		t.Errorf("usage-only chunk present = %v, want %v:\n%s", sawUsage, usageChunk, body)
	}
}

// TestSingleRequests checks single exchanges the load runs do not cover: a
// streaming client that asks for usage itself gets every event, the model is
// not rewritten when public and upstream names agree, and the gateway
// insists on its own key.
func TestSingleRequests(t *testing.T) {
	o, e := startChecked(t, "-quick")

	direct, gateway := e.targets(o, true)
	_, _, db, err := probe(direct)
	if err != nil {
		t.Fatal(err)
	}
	gateway.body = chatBody(directModel, true, true) // the client asks for usage
	status, h, gb, err := probe(gateway)
	if err != nil || status != 200 {
		t.Fatalf("gateway stream: status %d, err %v: %s", status, err, gb)
	}
	if countEvents(gb) != countEvents(db) {
		t.Errorf("stream with include_usage: gateway %d events, direct %d", countEvents(gb), countEvents(db))
	}
	checkEvents(t, gb, directModel, true)
	if h.Get("X-Request-Id") == "" {
		t.Errorf("gateway response has no X-Request-Id")
	}

	_, gateway = e.targets(o, false)
	status, _, gb, err = probe(gateway)
	if err != nil || status != 200 || string(modelOf(gb)) != directModel {
		t.Errorf("gateway non-stream: status %d, err %v, model %q", status, err, modelOf(gb))
	}
	gateway.auth = "sk-wrong-0123456789abcdef"
	if status, _, _, err = probe(gateway); err != nil || status != 401 {
		t.Errorf("wrong gateway key: status %d, err %v; want 401", status, err)
	}
}

// TestSplitPlacement runs -placement split briefly (c=4, 300 ms): the mock
// (this test binary again) and the gateway, each in a process of its own
// pinned to one CPU, the load generator to the other; no errors, every run
// measured, the placement proven and this process's CPU mask and
// GOMAXPROCS restored afterwards. The gateway is, in turn, the shipped
// binary (the default: built from the tree, its usage rows checked in its
// SQLite file), the in-process gateway and the bare pass-through.
//
// It pins processes to single CPUs, so it needs those CPUs to itself: under
// `go test ./...` other packages' tests run alongside and can starve a
// pinned process for a whole run. It is opt-in (ROSETTA_BENCH_SPLIT=1) and
// `make bench` runs it on its own.
func TestSplitPlacement(t *testing.T) {
	if os.Getenv("ROSETTA_BENCH_SPLIT") != "1" {
		t.Skip("opt-in: set ROSETTA_BENCH_SPLIT=1 (make bench does), on an otherwise idle machine")
	}
	if runtime.NumCPU() < 2 {
		t.Fatalf("split placement needs 2 CPUs; this machine has %d", runtime.NumCPU())
	}
	for _, c := range []struct {
		name string
		args []string
	}{{"shipped", nil}, {"inprocess", []string{"-gateway", "inprocess"}}, {"bare", []string{"-bare"}}} {
		t.Run(c.name, func(t *testing.T) { testSplit(t, c.args...) })
	}
}

// TestSplitPlacementNginx is TestSplitPlacement with nginx as a third
// contender. It is opt-in (ROSETTA_BENCH_NGINX=1), so that CI does not
// depend on nginx; opted in with CI=true, a missing nginx fails it.
func TestSplitPlacementNginx(t *testing.T) {
	if os.Getenv("ROSETTA_BENCH_NGINX") != "1" {
		t.Skip("opt-in: set ROSETTA_BENCH_NGINX=1 (needs nginx: apt-get install -y nginx-light)")
	}
	if runtime.NumCPU() < 2 {
		t.Skipf("split placement needs 2 CPUs; this machine has %d", runtime.NumCPU())
	}
	if findNginx() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ROSETTA_BENCH_NGINX=1 but no nginx on PATH or at /usr/sbin/nginx: install nginx-light")
		}
		t.Skip("no nginx on PATH or at /usr/sbin/nginx (apt-get install -y nginx-light)")
	}
	testSplit(t, "-nginx")
}

// TestSplitPlacementWrk is TestSplitPlacement with wrk as the load
// generator (-load wrk) in front of the shipped binary. It is opt-in
// (ROSETTA_BENCH_WRK=1), so that CI does not depend on wrk; opted in with
// CI=true, a missing wrk fails it.
func TestSplitPlacementWrk(t *testing.T) {
	if os.Getenv("ROSETTA_BENCH_WRK") != "1" {
		t.Skip("opt-in: set ROSETTA_BENCH_WRK=1 (needs wrk: apt-get install -y wrk)")
	}
	if runtime.NumCPU() < 2 {
		t.Skipf("split placement needs 2 CPUs; this machine has %d", runtime.NumCPU())
	}
	if findWrk() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ROSETTA_BENCH_WRK=1 but no wrk on PATH: apt-get install -y wrk")
		}
		t.Skip("no wrk on PATH (apt-get install -y wrk)")
	}
	testSplit(t, "-load", "wrk", "-d", "1s", "-warmup", "0s")
}

func testSplit(t *testing.T, extra ...string) {
	args := append([]string{"-placement", "split", "-c", "4", "-d", "300ms", "-warmup", "100ms", "-rounds", "1"}, extra...)
	nginx := slices.Contains(extra, "-nginx")
	o, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	cpus0, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	procs0 := runtime.GOMAXPROCS(0)

	var progress strings.Builder
	e, err := startSplit(o, &progress)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			e.close()
		}
	}()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS of the load generator = %d, want 1", got)
	}
	if err := e.check(o); err != nil {
		t.Fatal(err)
	}
	rows := runAll(o, e, &progress)
	var report strings.Builder
	printReportFor(&report, o, e.split, rows)
	t.Log("\n" + progress.String() + "\n" + report.String())

	want := []string{"direct", "gateway"}
	if nginx {
		want = []string{"direct", "nginx", "gateway"}
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2 (nonstream and stream at c=4)", len(rows))
	}
	for _, r := range rows {
		var got []string
		for _, x := range r.all() {
			got = append(got, x.target)
			if x.failed() {
				t.Errorf("%s %s: %d errors, %d non-200; first: %s", r.mode, x.target, x.errors, x.non200, x.firstError)
			}
			if x.requests == 0 || x.split == nil {
				t.Errorf("%s %s: %d requests, split figures %v", r.mode, x.target, x.requests, x.split)
				continue
			}
			if st := splitStatsOf(x); st.mockCPU <= 0 || (x.target == "nginx" && st.ngxCPU <= 0) || (x.target == "gateway" && st.gwCPU <= 0) {
				t.Errorf("%s %s: mock CPU %v/req, nginx %v/req, gateway %v/req: not measured", r.mode, x.target, st.mockCPU, st.ngxCPU, st.gwCPU)
			}
			if o.load == "wrk" && (x.wrk == nil || x.wrk.p50 <= 0 || x.cpu <= 0) {
				t.Errorf("%s %s: wrk figures %+v, load CPU %v", r.mode, x.target, x.wrk, x.cpu)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: ran %v, want %v", r.mode, got, want)
		}
	}
	if str := rows[1]; nginx && countEvents(str.nginx[0].sample) != countEvents(str.direct[0].sample) {
		t.Errorf("nginx stream has %d events, direct %d", countEvents(str.nginx[0].sample), countEvents(str.direct[0].sample))
	}
	gwProof := "pinned at start: rosetta serve (shipped binary"
	switch {
	case o.bare:
		gwProof = "pinned at start: bare pass-through"
	case o.gateway == "inprocess":
		gwProof = "pinned at start: in-process gateway"
	}
	wantReport := []string{"| nonstream | 4 |", "| stream | 4 |", "pinned at start: mock process",
		"pinned at start: load generator", gwProof}
	if o.load == "wrk" {
		wantReport = append(wantReport, "pinned at start: wrk ", "load generator: wrk ")
	}
	switch {
	case o.bare:
		wantReport = append(wantReport, "| bare req/s |")
	case o.gateway == "shipped":
		wantReport = append(wantReport, "| rosetta req/s |", "rosetta wrote ", "GOMAXPROCS 1 (its own default")
	default:
		wantReport = append(wantReport, "| in-process gw req/s |", "WITHOUT a store")
	}
	for _, s := range wantReport {
		if !strings.Contains(report.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if nginx && !strings.Contains(report.String(), "pinned at start: nginx worker") {
		t.Errorf("report lacks the nginx worker's placement")
	}
	for _, s := range []string{"ERRORS", "PLACEMENT BROKEN"} {
		if strings.Contains(report.String(), s) {
			t.Errorf("report says %s", s)
		}
	}

	if sh := e.split.shipped; sh != nil {
		var gwReqs int64
		for _, r := range rows {
			for _, x := range r.gateway {
				gwReqs += int64(x.requests)
			}
		}
		all, ok, err := sh.usageRows()
		if err != nil || ok < gwReqs || all != ok {
			t.Errorf("the shipped binary's usage_log: %d rows, %d with status 200, err %v; want at least the %d measured gateway requests, all 200",
				all, ok, err, gwReqs)
		}
	}
	mock, gw, ngx, sh := e.split.mock, e.split.gateway, e.split.nginx, e.split.shipped
	e.close()
	closed = true
	if !mock.exited() || !gw.exited() || (ngx != nil && !ngx.exited()) {
		t.Errorf("a child process outlived close")
	}
	if sh != nil {
		if _, err := os.Stat(sh.dir); !os.IsNotExist(err) {
			t.Errorf("the shipped binary's directory %s outlived close (%v)", sh.dir, err)
		}
	}
	if cpus, _ := allowedCPUs(); !slices.Equal(cpus, cpus0) {
		t.Errorf("CPU mask after close = %v, want %v", cpus, cpus0)
	}
	if got := runtime.GOMAXPROCS(0); got != procs0 {
		t.Errorf("GOMAXPROCS after close = %d, want %d", got, procs0)
	}
}

// startChecked starts the harness's servers for the flags, closed at the
// end of the test, and checks that every contender answers.
func startChecked(t *testing.T, flags ...string) (options, *env) {
	t.Helper()
	o, err := parseFlags(flags)
	if err != nil {
		t.Fatal(err)
	}
	e, err := startEnv(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	if err := e.check(o); err != nil {
		t.Fatal(err)
	}
	return o, e
}
