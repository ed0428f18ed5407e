package main

import (
	"strings"
	"testing"
	"time"
)

// TestSplitReportContenders renders split placement's report from made-up
// runs of every contender (nginx listed but not run), without starting
// anything: each contender's figures land in its own columns, the ratios
// divide the gateway's by the floor's and the baseline's, and the budget
// and the before/after lines say so. TestSplitPlacement checks the same
// on real runs (opt-in).
func TestSplitReportContenders(t *testing.T) {
	o, err := parseFlags([]string{"-placement", "split", "-floor", "-baseline", "HEAD~1", "-c", "16", "-modes", "nonstream", "-rounds", "1"})
	if err != nil {
		t.Fatal(err)
	}
	s := &splitEnv{srvCPU: 0, loadCPU: 1, list: []*contender{
		{name: "direct", label: "direct", abbr: "d", addr: "a", asDirect: true, about: "the mock"},
		{name: "nginx", label: "nginx", abbr: "n", asDirect: true, about: "no -nginx"},
		{name: "gateway", label: "rosetta", abbr: "g", addr: "b", about: "the tree's"},
		{name: "bare", label: "bare", abbr: "f", addr: "c", about: "the floor"},
		{name: "baseline", label: "rosetta@abc1234", abbr: "b", addr: "d", about: "the baseline"},
	}}
	// CPU per request of each contender's own process, and its req/s.
	own := map[string]time.Duration{"gateway": 60 * time.Microsecond, "bare": 40 * time.Microsecond, "baseline": 75 * time.Microsecond}
	rps := map[string]int{"direct": 40000, "gateway": 12000, "bare": 16000, "baseline": 10000}
	r := newRow("nonstream", 16, s.list)
	for _, name := range []string{"direct", "gateway", "bare", "baseline"} {
		n := rps[name]
		x := &splitSample{mock: procTimes{cpu: time.Duration(n) * 20 * time.Microsecond}, own: map[string]procTimes{},
			srvCore: coreTimes{total: time.Second, idle: 100 * time.Millisecond}, loadCore: coreTimes{total: time.Second}}
		for other, d := range own { // every proxy's process is sampled; only the loaded one works
			if other == name {
				x.own[other] = procTimes{cpu: time.Duration(n) * d}
			} else {
				x.own[other] = procTimes{}
			}
		}
		r.add(&result{target: name, conns: 16, window: time.Second, cores: 1, requests: n, cpu: time.Duration(n) * 30 * time.Microsecond,
			lat: []time.Duration{100 * time.Microsecond, 200 * time.Microsecond}, split: x})
	}
	var out strings.Builder
	printSplitReport(&out, o, s, []*row{r})
	report := out.String()
	t.Log("\n" + report)

	for col, want := range map[string]string{
		"direct req/s": "40000", "nginx req/s": "—", "rosetta req/s": "12000", "bare req/s": "16000", "rosetta@abc1234 req/s": "10000",
		"rosetta/bare": "0.75×", "rosetta/rosetta@abc1234": "1.20×", "rosetta/nginx": "—", "rosetta/direct": "0.30×",
		"rosetta": "60.0µs", "bare": "40.0µs", "rosetta@abc1234": "75.0µs", "nginx": "—", "mock, bare runs": "20.0µs",
		"rosetta ÷ bare (budget ≤ 1.25)": "1.50×", "rosetta ÷ rosetta@abc1234": "0.80×",
		"added p50 nginx / rosetta / bare / rosetta@abc1234": "— / 0µs / 0µs / 0µs",
	} {
		if got := tableColumn(report, col); len(got) != 1 || got[0] != want {
			t.Errorf("column %q = %q, want [%q]", col, got, want)
		}
	}
	for _, want := range []string{
		"## Rosetta pass-through vs nginx, split placement (DESIGN.md §5): rosetta; mock fasthttp; load built-in\n",
		"- mock upstream: fasthttp (-mock fasthttp, the default:",
		"  - d = direct: the mock", "  - g = rosetta: the tree's", "  - f = bare: the floor", "  - b = rosetta@abc1234: the baseline",
		"- not run, their columns show —: nginx (no -nginx)",
		"the servers (mock, rosetta, bare, rosetta@abc1234), each a process of its own",
		"| load CPU/req d / n / g / f / b |",
		"Budget (issue 11): rosetta's own CPU per request ≤ 1.25× the bare pass-through's, measured in the same run: nonstream c=16 1.50× (OVER). **Over it in 1 of 1 rows.**",
		"Before/after, rosetta ÷ rosetta@abc1234 in the same run: nonstream c=16 req/s 1.20×, CPU/req 0.80×.",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestContenderFlags: -floor and -baseline add contenders to split
// placement only, beside the shipped binary they are compared with; -mock
// names a server the mock has.
func TestContenderFlags(t *testing.T) {
	for _, ok := range [][]string{
		{"-placement", "split", "-floor"},
		{"-placement", "split", "-baseline", "HEAD~3"},
		{"-placement", "split", "-nginx", "-floor", "-baseline", "v1.0", "-load", "wrk"},
		{"-placement", "split", "-floor", "-gateway", "inprocess"},
		{"-placement", "split", "-floor", "-only", "bare"},
		{"-placement", "split", "-baseline", "HEAD", "-only", "baseline", "-mapped"},
	} {
		o, err := parseFlags(ok)
		if err != nil {
			t.Errorf("%q refused: %v", ok, err)
			continue
		}
		if o.floor != strings.Contains(strings.Join(ok, " "), "-floor") || (o.baseline == "") == strings.Contains(strings.Join(ok, " "), "-baseline") {
			t.Errorf("%q: floor %v, baseline %q", ok, o.floor, o.baseline)
		}
	}
	for server, args := range map[string][]string{
		"fasthttp": {"-placement", "split"}, "nethttp": {"-placement", "split", "-mock", "nethttp"},
	} {
		if o, err := parseFlags(args); err != nil || o.mock != server || o.hold.mock != server {
			t.Errorf("%q: mock %q, hold's %q, %v; want %s", args, o.mock, o.hold.mock, err, server)
		}
	}
	for _, bad := range [][]string{
		{"-floor"}, {"-baseline", "HEAD"},
		{"-placement", "split", "-floor", "-bare"},
		{"-placement", "split", "-floor", "-mapped"},
		{"-placement", "split", "-floor", "-client", "anthropic"},
		{"-placement", "split", "-baseline", "HEAD", "-gateway", "inprocess"},
		{"-placement", "split", "-baseline", "HEAD", "-bare"},
		{"-placement", "split", "-baseline", "-floor"},
		{"-placement", "split", "-only", "bare"},
		{"-placement", "split", "-only", "baseline"},
		{"-placement", "split", "-only", "floor"},
		{"-placement", "split", "-mock", "nginx"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
