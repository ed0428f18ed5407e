package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
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
// carrying the direct stream's events minus the usage chunk it strips; on
// either mock server (-mock).
func TestQuick(t *testing.T) {
	for _, server := range mockServers {
		t.Run(server, func(t *testing.T) { testQuick(t, server) })
	}
}

func testQuick(t *testing.T, server string) {
	o, e := startChecked(t, "-quick", "-mapped", "-mock", server)
	if got := mockServerAt(t, e.mockAddr); got != server {
		t.Fatalf("-mock %s: the mock runs on %s", server, got)
	}
	var progress strings.Builder
	rows := runAll(o, e, &progress)
	t.Log("\n" + progress.String())
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2 (nonstream and stream at c=16)", len(rows))
	}

	for _, r := range rows {
		for _, x := range r.all() {
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
	if got := string(modelOf(non.of("gateway")[0].sample)); got != mappedPublic {
		t.Errorf("gateway response model = %q, want the public name %q", got, mappedPublic)
	}
	if got := string(modelOf(non.of("direct")[0].sample)); got != mappedUpstream {
		t.Errorf("direct response model = %q, want %q", got, mappedUpstream)
	}

	direct, gateway := str.of("direct")[0].sample, str.of("gateway")[0].sample
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
	for _, want := range []string{"| nonstream | 16 |", "| stream | 16 |", "GOMAXPROCS=", "mock " + server + ")", "- mock upstream: " + server + " (-mock " + server} {
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

	direct, gateway := e.targets(o, "stream")
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

	_, gateway = e.targets(o, "nonstream")
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
// SQLite file), the in-process gateway and the bare pass-through. Then, for
// a second each, the shipped binary with the bare pass-through beside it
// (-floor), and with the binary built from HEAD beside it (-baseline HEAD):
// their columns are in every table, with numbers.
//
// It pins processes to single CPUs, so it needs those CPUs to itself: under
// `go test ./...` other packages' tests run alongside and can starve a
// pinned process for a whole run. It is opt-in (ROSETTA_BENCH_SPLIT=1) and
// `make bench` runs it on its own. -baseline needs git and a checkout with
// a HEAD: without them the baseline case skips, or with CI=true fails.
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
	}{
		{"shipped", nil}, {"inprocess", []string{"-gateway", "inprocess"}}, {"bare", []string{"-bare"}},
		{"floor", []string{"-floor", "-d", "1s"}}, {"baseline", []string{"-baseline", "HEAD", "-d", "1s"}},
		{"nethttp-mock", []string{"-mock", "nethttp", "-gateway", "inprocess"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "baseline" {
				needGitHead(t)
			}
			testSplit(t, c.args...)
		})
	}
}

// needGitHead skips the test, or with CI=true fails it, when -baseline
// HEAD cannot build: no git, or the module is not in a checkout.
func needGitHead(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("git"); err != nil {
		why = "no git on PATH"
	} else if root, err := moduleRoot(); err != nil {
		why = err.Error()
	} else if _, err := git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		why = root + " is not a git checkout with a HEAD"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("-baseline HEAD cannot build: %s", why)
	}
	t.Skipf("-baseline HEAD cannot build: %s", why)
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
// generator (-load wrk) in front of the shipped binary and, beside it, the
// bare pass-through (-floor). It is opt-in (ROSETTA_BENCH_WRK=1), so that
// CI does not depend on wrk; opted in with CI=true, a missing wrk fails it.
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
	testSplit(t, "-load", "wrk", "-d", "1s", "-warmup", "0s", "-floor")
}

func testSplit(t *testing.T, extra ...string) {
	args := append([]string{"-placement", "split", "-c", "4", "-d", "300ms", "-warmup", "100ms", "-rounds", "1"}, extra...)
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
	if got := mockServerAt(t, e.mockAddr); got != o.mock {
		t.Errorf("-mock %s: the mock process runs on %s", o.mock, got)
	}
	if err := e.check(o); err != nil {
		t.Fatal(err)
	}
	rows := runAll(o, e, &progress)
	var report strings.Builder
	printReportFor(&report, o, e.split, rows)
	t.Log("\n" + progress.String() + "\n" + report.String())

	want := []string{"direct"}
	if o.nginx {
		want = append(want, "nginx")
	}
	want = append(want, "gateway")
	if o.floor {
		want = append(want, "bare")
	}
	if o.baseline != "" {
		want = append(want, "baseline")
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
			if st := splitStatsOf(x); st.mockCPU <= 0 || (x.target != "direct" && st.ownCPU <= 0) {
				t.Errorf("%s %s: mock CPU %v/req, its own %v/req: not measured", r.mode, x.target, st.mockCPU, st.ownCPU)
			}
			if o.load == "wrk" && (x.wrk == nil || x.wrk.p50 <= 0 || x.cpu <= 0) {
				t.Errorf("%s %s: wrk figures %+v, load CPU %v", r.mode, x.target, x.wrk, x.cpu)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: ran %v, want %v", r.mode, got, want)
		}
	}
	if str := rows[1]; o.nginx && countEvents(str.of("nginx")[0].sample) != countEvents(str.of("direct")[0].sample) {
		t.Errorf("nginx stream has %d events, direct %d", countEvents(str.of("nginx")[0].sample), countEvents(str.of("direct")[0].sample))
	}
	if str := rows[1]; o.floor {
		checkEvents(t, str.of("bare")[0].sample, directModel, false)
	}
	gwProof := "pinned at start: rosetta serve (shipped binary"
	switch {
	case o.bare:
		gwProof = "pinned at start: bare pass-through"
	case o.gateway == "inprocess":
		gwProof = "pinned at start: in-process gateway"
	}
	wantReport := []string{"| nonstream | 4 |", "| stream | 4 |", "pinned at start: mock process (" + o.mock + ",", "- mock upstream: " + o.mock,
		"pinned at start: load generator", gwProof, "- contenders that ran", "  - d = direct: ", "  - g = "}
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
	if !o.nginx {
		wantReport = append(wantReport, "- not run, their columns show —: nginx (no -nginx)")
	}
	// The new contenders' columns, with numbers in every row.
	var cols [][2]string // header cell, what its cells look like
	if o.floor {
		wantReport = append(wantReport, "  - f = bare: -floor", "pinned at start: bare pass-through's process (-floor", "Budget (issue 11): rosetta's own CPU per request ≤ 1.25×")
		cols = append(cols, [2]string{"bare req/s", "n"}, [2]string{"rosetta/bare", "×"}, [2]string{"bare p50 / p99", "lat"},
			[2]string{"mock, bare runs", "µs"}, [2]string{"bare", "µs"}, [2]string{"rosetta ÷ bare (budget ≤ 1.25)", "×"},
			[2]string{"bare ttfb p50", "lat"}, [2]string{"bare events", "n"})
	}
	if o.baseline != "" {
		bl := e.split.baseline.label()
		wantReport = append(wantReport, "  - b = "+bl+": -baseline HEAD", "pinned at start: rosetta serve (baseline binary, "+bl,
			bl+" wrote ", "`-baseline HEAD` = commit ", "Before/after, rosetta ÷ "+bl+" in the same run: nonstream c=4 req/s ")
		cols = append(cols, [2]string{bl + " req/s", "n"}, [2]string{"rosetta/" + bl, "×"}, [2]string{bl + " p50 / p99", "lat"},
			[2]string{"mock, " + bl + " runs", "µs"}, [2]string{bl, "µs"}, [2]string{"rosetta ÷ " + bl, "×"},
			[2]string{bl + " ttfb p50", "lat"}, [2]string{bl + " events", "n"})
	}
	for _, s := range wantReport {
		if !strings.Contains(report.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, c := range cols {
		cells := tableColumn(report.String(), c[0])
		wantRows := 2
		if strings.Contains(c[0], "ttfb") || strings.Contains(c[0], "events") {
			wantRows = 1 // the streams table
		}
		if len(cells) != wantRows {
			t.Errorf("column %q: %d cells %q, want %d", c[0], len(cells), cells, wantRows)
			continue
		}
		for _, cell := range cells {
			if c[1] == "lat" && o.load == "wrk" && strings.Contains(c[0], "ttfb") {
				continue // wrk measures no time to first byte
			}
			if !numberCell[c[1]].MatchString(cell) {
				t.Errorf("column %q: cell %q is not a number (%s)", c[0], cell, c[1])
			}
		}
	}
	if o.nginx && !strings.Contains(report.String(), "pinned at start: nginx worker") {
		t.Errorf("report lacks the nginx worker's placement")
	}
	for _, s := range []string{"ERRORS", "PLACEMENT BROKEN", "cannot read them"} {
		if strings.Contains(report.String(), s) {
			t.Errorf("report says %s", s)
		}
	}

	for _, b := range []struct {
		name string
		sh   *shipped
	}{{"gateway", e.split.shipped}, {"baseline", baselineShipped(e.split.baseline)}} {
		if b.sh == nil {
			continue
		}
		var reqs int64
		for _, r := range rows {
			for _, x := range r.of(b.name) {
				reqs += int64(x.requests)
			}
		}
		all, ok, err := b.sh.usageRows()
		if err != nil || ok < reqs || all != ok {
			t.Errorf("the %s's usage_log: %d rows, %d with status 200, err %v; want at least the %d measured requests, all 200",
				b.name, all, ok, err, reqs)
		}
	}
	mock, list, sh, bl := e.split.mock, e.split.list, e.split.shipped, e.split.baseline
	e.close()
	closed = true
	if !mock.exited() {
		t.Errorf("the mock outlived close")
	}
	for _, c := range list {
		if c.proc != nil && !c.proc.exited() {
			t.Errorf("the %s's process outlived close", c.name)
		}
	}
	for _, dir := range []*shipped{sh, baselineShipped(bl)} {
		if dir == nil {
			continue
		}
		if _, err := os.Stat(dir.dir); !os.IsNotExist(err) {
			t.Errorf("the shipped binary's directory %s outlived close (%v)", dir.dir, err)
		}
	}
	if bl != nil {
		root, _ := moduleRoot()
		if wt, err := git(root, "worktree", "list", "--porcelain"); err != nil || strings.Contains(wt, bl.src) {
			t.Errorf("the baseline's worktree %s outlived close: %v\n%s", bl.src, err, wt)
		}
	}
	if cpus, _ := allowedCPUs(); !slices.Equal(cpus, cpus0) {
		t.Errorf("CPU mask after close = %v, want %v", cpus, cpus0)
	}
	if got := runtime.GOMAXPROCS(0); got != procs0 {
		t.Errorf("GOMAXPROCS after close = %d, want %d", got, procs0)
	}
}

func baselineShipped(b *baseline) *shipped {
	if b == nil {
		return nil
	}
	return b.sh
}

// numberCell is what a table cell with a number looks like, by kind.
var numberCell = map[string]*regexp.Regexp{
	"n":   regexp.MustCompile(`^[0-9]+$`),
	"×":   regexp.MustCompile(`^[0-9]+\.[0-9]{2}×$`),
	"µs":  regexp.MustCompile(`^[0-9]+\.[0-9]µs$`),
	"lat": regexp.MustCompile(`^[0-9.]+(ns|µs|ms|s)( / [0-9.]+(ns|µs|ms|s))?$`),
}

// tableColumn returns the body cells of the column headed exactly header
// in the first markdown table of report that has one.
func tableColumn(report, header string) []string {
	split := func(line string) []string {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) < 3 {
			return nil
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f[1 : len(f)-1]
	}
	lines := strings.Split(report, "\n")
	for i, line := range lines {
		col := slices.Index(split(line), header)
		if !strings.HasPrefix(line, "|") || col < 0 {
			continue
		}
		var cells []string
		for _, body := range lines[i+2:] { // past the alignment row
			f := split(body)
			if !strings.HasPrefix(body, "|") || len(f) <= col {
				break
			}
			cells = append(cells, f[col])
		}
		return cells
	}
	return nil
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

// modeOf is the chat mode of a stream or not.
func modeOf(stream bool) string {
	if stream {
		return "stream"
	}
	return "nonstream"
}
