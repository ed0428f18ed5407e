package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// floorBudget is issue 11's budget: the gateway's own CPU per request at
// most this many times the bare pass-through's (-floor), in the same run.
const floorBudget = 1.25

// splitSummary is the medians over a row's rounds for one contender in split
// placement.
type splitSummary struct {
	summary    // the load generator's view: req/s, latencies, its own CPU
	splitStats // the servers' CPU and the cores
	n          int
}

func summarizeSplit(rs []*result) splitSummary {
	s := splitSummary{summary: summarize(rs), n: len(rs)}
	var mockCPU, ownCPU []time.Duration
	var use, wait, irq, lirq, oth, loth, st, lst []float64
	for _, r := range rs {
		x := splitStatsOf(r)
		mockCPU, ownCPU = append(mockCPU, x.mockCPU), append(ownCPU, x.ownCPU)
		use, wait = append(use, x.srvUse), append(wait, x.srvWait)
		irq, lirq = append(irq, x.srvIRQ), append(lirq, x.loadIRQ)
		oth, loth = append(oth, x.srvOthers), append(loth, x.loadOthers)
		st, lst = append(st, x.srvSteal), append(lst, x.loadSteal)
	}
	s.splitStats = splitStats{mockCPU: medianDur(mockCPU), ownCPU: medianDur(ownCPU), srvUse: median(use),
		srvWait: median(wait), srvIRQ: median(irq), loadIRQ: median(lirq), srvOthers: median(oth),
		loadOthers: median(loth), srvSteal: median(st), loadSteal: median(lst)}
	return s
}

// Cells of the split report; "—" where a contender did not run.
func (s splitSummary) rpsCell() string {
	if s.n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", s.summary.rps)
}

func (s splitSummary) lat() string {
	if s.n == 0 {
		return "—"
	}
	return fmtLat(s.p50) + " / " + fmtLat(s.p99)
}

func (s splitSummary) cpuCell(d time.Duration) string {
	if s.n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1fµs", us(d))
}

func pct(s splitSummary, x float64) string {
	if s.n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func ratioCell(a, b splitSummary) string {
	if a.n == 0 || b.n == 0 || b.summary.rps == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.summary.rps/b.summary.rps)
}

// cpuRatio is a's own CPU per request ÷ b's, 0 when either is missing.
func cpuRatio(a, b splitSummary) float64 {
	if a.n == 0 || b.n == 0 || b.ownCPU <= 0 {
		return 0
	}
	return float64(a.ownCPU) / float64(b.ownCPU)
}

func cpuRatioCell(a, b splitSummary) string {
	x := cpuRatio(a, b)
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

// addedCell is the p50 latency a proxy adds to the direct run's.
func addedCell(proxy, direct splitSummary) string {
	if proxy.n == 0 || direct.n == 0 {
		return "—"
	}
	return fmtDur(proxy.p50 - direct.p50)
}

// loadName names the load generator in the report's title.
func loadName(o options) string {
	if o.load == "wrk" {
		return "wrk"
	}
	return "built-in"
}

// cutNote says which requests may end without a 200 in the usage log.
func cutNote(o options) string {
	if o.load == "wrk" {
		return "; wrk stops a run with requests in flight, whose rows say how the gateway saw them end"
	}
	return ""
}

// rowSums is a row's summaries, one per contender of the list, in its order.
type rowSums []splitSummary

func summarizeRow(r *row, list []*contender) rowSums {
	sums := make(rowSums, len(list))
	for i, c := range list {
		sums[i] = summarizeSplit(r.of(c.name))
	}
	return sums
}

// cells formats one cell per contender of cs: f of its summary.
func cells(list, cs []*contender, sums rowSums, f func(splitSummary) string) []string {
	var out []string
	for _, c := range cs {
		for i, l := range list {
			if l == c {
				out = append(out, f(sums[i]))
			}
		}
	}
	return out
}

func labels(cs []*contender, format string) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf(format, c.label))
	}
	return out
}

// letters is the contenders' letters as the tables' "x / y / z" cells name them.
func letters(cs []*contender) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.abbr)
	}
	return strings.Join(out, " / ")
}

// tableRow writes a markdown table row of cells.
func tableRow(w io.Writer, cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }

// tableHead writes a table's header: the first two columns left- and
// right-aligned (mode, c), the others right-aligned.
func tableHead(w io.Writer, left int, cols ...string) {
	tableRow(w, cols...)
	align := make([]string, len(cols))
	for i := range align {
		align[i] = "---:"
		if i < left {
			align[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
}

// usedRequests counts the measured requests of the contender named name.
func usedRequests(rows []*row, name string) int {
	n := 0
	for _, r := range rows {
		for _, x := range r.of(name) {
			n += x.requests
		}
	}
	return n
}

// printUsage says what a shipped binary wrote: usage rows and log.
func printUsage(w io.Writer, o options, label string, f shippedFacts, reqs int) {
	if f.err != nil {
		fmt.Fprintf(w, "- **%s's usage rows: cannot read them: %v**\n", label, f.err)
		return
	}
	fmt.Fprintf(w, "- %s wrote %d usage rows into its SQLite file (by status: %s) for %d measured requests (and the warm-ups and checks%s), and %.1f MB of log (%.0f B per row)\n",
		label, f.rows, f.byStatus, reqs, cutNote(o), float64(f.logBytes)/1e6, float64(f.logBytes)/float64(max(f.rows, 1)))
}

func printSplitReport(w io.Writer, o options, s *splitEnv, rows []*row) {
	model := directModel + " (same name upstream: no model rewrite)"
	if o.mapped {
		model = mappedPublic + " → " + mappedUpstream + " (model rewritten in every gateway response and event)"
	}
	list := s.list
	gwc := s.contender("gateway")
	gw := gwc.label
	// proxies are the contenders in front of the mock, refs those the
	// gateway is divided by (nginx, bare, baseline), servers the proxies
	// that run.
	var proxies, refs, servers []*contender
	for _, c := range list {
		if !c.isProxy() {
			continue
		}
		proxies = append(proxies, c)
		if c != gwc {
			refs = append(refs, c)
		}
		if c.addr != "" {
			servers = append(servers, c)
		}
	}
	dc := s.contender("direct")
	sumsOf := func(r *row) (sums rowSums, direct, gateway splitSummary) {
		sums = summarizeRow(r, list)
		return sums, sumOf(list, sums, dc), sumOf(list, sums, gwc)
	}

	fmt.Fprintf(w, "## Rosetta pass-through vs nginx, split placement (DESIGN.md §5): %s; mock %s; load %s\n\n", gw, o.mock, loadName(o))
	fmt.Fprintf(w, "**%s**\n\n", gwNote(o))
	fmt.Fprintf(w, "- %s %s/%s, CPUs=%d; CPU %d: the servers (mock, %s), each a process of its own; CPU %d: the load generator\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), s.srvCPU, strings.Join(labels(servers, "%s"), ", "), s.loadCPU)
	fmt.Fprintf(w, "- contenders that ran, in the first round's order (rotated by one each round), with their letters in the tables' \"x / y\" cells:\n")
	var notRun []string
	for _, c := range list {
		if c.ran(o) {
			fmt.Fprintf(w, "  - %s = %s: %s\n", c.abbr, c.label, c.about)
			continue
		}
		why := c.about
		if c.addr != "" {
			why = "-only " + o.only
		}
		notRun = append(notRun, fmt.Sprintf("%s (%s)", c.label, why))
	}
	if len(notRun) > 0 {
		fmt.Fprintf(w, "- not run, their columns show —: %s\n", strings.Join(notRun, "; "))
	}
	if s.shipped != nil || s.baseline != nil {
		time.Sleep(flushWait)
	}
	if sh := s.shipped; sh != nil {
		fmt.Fprintf(w, "- rosetta: `go build -o %s ./cmd/rosetta` of %s (%.1fs), started as `rosetta serve -config rosetta.yaml` in %s, GOMAXPROCS %s (its own default, from its CPU mask; read from its /metrics); "+
			"one openai channel to the mock, a static key, no store section (the default SQLite store, rosetta.db); log and access log: its default JSON through its async writer to stderr, sent to rosetta.log\n",
			sh.bin, sh.tree, sh.build.Seconds(), sh.dir, sh.gomaxprocs)
		printUsage(w, o, gw, shippedFactsOf(sh), usedRequests(rows, "gateway"))
	}
	if b := s.baseline; b != nil {
		fmt.Fprintf(w, "- %s: `-baseline %s` = commit %s (%q), checked out with `git worktree add --detach` into %s and built there with `go build -o %s ./cmd/rosetta` (%.1fs with the checkout; the worktree removed after the build), "+
			"started as the tree's binary is: `rosetta serve -config rosetta.yaml` in %s, the same configuration (its own SQLite store and log there), GOMAXPROCS %s\n",
			b.label(), b.rev, b.commit, b.subject, b.src, b.sh.bin, b.sh.build.Seconds(), b.sh.dir, b.sh.gomaxprocs)
		printUsage(w, o, b.label(), shippedFactsOf(b.sh), usedRequests(rows, "baseline"))
		if s.shipped != nil && b.sameAsTree(s.shipped.tree) {
			fmt.Fprintf(w, "- **the tree is that same commit, unchanged (%s): the two binaries are the same code, so their ratios measure this run's noise, not a change**\n", s.shipped.tree)
		}
	}
	fmt.Fprintf(w, "- mock upstream: %s\n", mockAbout(o.mock))
	if s.wrk != nil {
		fmt.Fprintf(w, "- load generator: wrk %s (%s), -t 1 -c N --latency, a Lua script for the POST's body and headers; its own req/s and p50/p99, its CPU from its rusage; -d and -warmup rounded up to whole seconds (here %ds and %ds); stream responses read to their end but not checked (a probe before each run checks one)\n",
			s.wrk.version, s.wrk.bin, wrkSeconds(o.dur), wrkSeconds(o.warmup))
		if s.wrk.proof != "" {
			fmt.Fprintf(w, "- pinned at start: %s\n", s.wrk.proof)
		}
	} else {
		fmt.Fprintf(w, "- load generator: the built-in fasthttp client, this process (GOMAXPROCS=1)\n")
	}
	for _, p := range s.proof {
		fmt.Fprintf(w, "- pinned at start: %s\n", p)
	}
	// Checked again now: a process that moved would void the numbers.
	procs := []*proc{s.mock}
	for _, c := range list {
		procs = append(procs, c.proc)
	}
	for _, p := range procs {
		if p == nil {
			continue
		}
		if _, err := checkPinned(p.name, p.pid(), s.srvCPU); err != nil {
			fmt.Fprintf(w, "- **PLACEMENT BROKEN at the end: %v**\n", err)
		}
	}
	if ngx := s.contender("nginx"); ngx != nil && ngx.proc != nil {
		fmt.Fprintf(w, "- nginx %s as a plain reverse proxy: 1 worker, upstream keepalive 256, proxy_http_version 1.1, Connection \"\", proxy_buffering off, access_log off; it gets the direct client's requests byte for byte (upstream key and model, include_usage on streams), so the mock behind it does a direct run's work\n", s.nginxVersion)
	}
	if s.nginxNote != "" {
		fmt.Fprintf(w, "\n**%s**\n\n", s.nginxNote)
	}
	fmt.Fprintf(w, "- %s measured per run after %s warm-up, %d round(s), the contenders' order rotated each round; medians across rounds\n",
		o.dur, o.warmup, o.rounds)
	fmt.Fprintf(w, "- request: %s; model: %s; streams: %d content chunks (+ role, finish, usage, [DONE]), event delay %s\n",
		requestLine(o), model, o.events, o.eventDelay)
	printRate(w, o)
	fmt.Fprintln(w)

	// Throughput and latency.
	head := append([]string{"mode", "c"}, labels(list, "%s req/s")...)
	for _, ref := range refs {
		head = append(head, gw+"/"+ref.label)
	}
	head = append(head, gw+"/direct")
	head = append(head, labels(list, "%s p50 / p99")...)
	head = append(head, "added p50 "+strings.Join(labels(proxies, "%s"), " / "))
	tableHead(w, 1, head...)
	for _, r := range rows {
		sums, d, g := sumsOf(r)
		flag := ""
		if r.failed() {
			flag = " **ERRORS**"
		}
		cs := append([]string{r.mode + flag, fmt.Sprint(r.conns)}, cells(list, list, sums, splitSummary.rpsCell)...)
		cs = append(cs, cells(list, refs, sums, func(x splitSummary) string { return ratioCell(g, x) })...)
		cs = append(cs, ratioCell(g, d))
		cs = append(cs, cells(list, list, sums, splitSummary.lat)...)
		cs = append(cs, strings.Join(cells(list, proxies, sums, func(x splitSummary) string { return addedCell(x, d) }), " / "))
		tableRow(w, cs...)
	}

	// CPU per request on the servers' CPU.
	fmt.Fprintf(w, "\nCPU per request on CPU %d (from each process's /proc/<pid>/stat, 10 ms ticks), medians. The mock serves every run; nginx counts its master and worker; every proxy is its own process, so its figure is its own, measured, not estimated. \"used\" is the share of CPU %d that the mock and the proxies (the idle ones too) used, \"irq\" the share in interrupts (on loopback, much of the network stack runs there, charged to no process).", s.srvCPU, s.srvCPU)
	for _, ref := range refs {
		switch ref.name {
		case "bare":
			fmt.Fprintf(w, " %s ÷ bare is the gateway's own CPU over the floor's: issue 11's budget is ≤ %.2f×.", gw, floorBudget)
		case "baseline":
			fmt.Fprintf(w, " %s ÷ %s is after ÷ before: below 1 the tree costs less CPU per request than the baseline.", gw, ref.label)
		}
	}
	fmt.Fprint(w, "\n\n")
	head = append([]string{"mode", "c"}, labels(list, "mock, %s runs")...)
	head = append(head, labels(proxies, "%s")...)
	for _, ref := range refs {
		h := gw + " ÷ " + ref.label
		if ref.name == "bare" {
			h += fmt.Sprintf(" (budget ≤ %.2f)", floorBudget)
		}
		head = append(head, h)
	}
	head = append(head, "used "+letters(list), "irq "+letters(list))
	tableHead(w, 1, head...)
	for _, r := range rows {
		sums, _, g := sumsOf(r)
		cs := append([]string{r.mode, fmt.Sprint(r.conns)}, cells(list, list, sums, func(x splitSummary) string { return x.cpuCell(x.mockCPU) })...)
		cs = append(cs, cells(list, proxies, sums, func(x splitSummary) string { return x.cpuCell(x.ownCPU) })...)
		cs = append(cs, cells(list, refs, sums, func(x splitSummary) string { return cpuRatioCell(g, x) })...)
		cs = append(cs, strings.Join(cells(list, list, sums, func(x splitSummary) string { return pct(x, x.srvUse) }), " / "),
			strings.Join(cells(list, list, sums, func(x splitSummary) string { return pct(x, x.srvIRQ) }), " / "))
		tableRow(w, cs...)
	}
	if bare := s.contender("bare"); bare != nil {
		printBudget(w, rows, list, gwc, bare)
	}
	if bl := s.contender("baseline"); bl != nil {
		printBeforeAfter(w, rows, list, gwc, bl)
	}

	// The load generator and the noise.
	fmt.Fprintf(w, "\nThe load generator on CPU %d, and noise: \"used\" is the share of CPU %d it used (near 100%% means it, not the proxy, may be the limit); run-queue wait is the time our threads were runnable but had no core, per window: pinned to one CPU, a process's threads also queue behind each other (the load generator's most: several threads, one CPU), so wait alone is not noise (on CPU %d it counts direct runs only: in proxied runs the mock and the proxy, two processes on one CPU, wait for each other; with wrk the load generator's wait is not measured: —); \"others\" is the share of a CPU that other processes used and steal what the hypervisor took: those two are the noise. Noise columns show the worst run of the row.\n\n", s.loadCPU, s.loadCPU, s.srvCPU)
	lt := letters(list)
	tableHead(w, 1, "mode", "c", "load CPU/req "+lt, fmt.Sprintf("CPU %d used %s", s.loadCPU, lt), fmt.Sprintf("CPU %d irq %s", s.loadCPU, lt),
		fmt.Sprintf("wait CPU %d / CPU %d", s.srvCPU, s.loadCPU), fmt.Sprintf("others CPU %d / CPU %d", s.srvCPU, s.loadCPU),
		fmt.Sprintf("steal CPU %d / CPU %d", s.srvCPU, s.loadCPU))
	var worst struct{ srvWait, loadWait, srvOth, loadOth, steal, loadUse float64 }
	for _, r := range rows {
		sums, _, _ := sumsOf(r)
		var srvWait, loadWait, srvOth, loadOth, srvSteal, loadSteal float64
		for _, x := range r.all() {
			st := splitStatsOf(x)
			if x.target == "direct" {
				srvWait = max(srvWait, st.srvWait)
			}
			loadWait = max(loadWait, x.waitShare())
			srvOth, loadOth = max(srvOth, st.srvOthers), max(loadOth, st.loadOthers)
			srvSteal, loadSteal = max(srvSteal, st.srvSteal), max(loadSteal, st.loadSteal)
			if x.target != "direct" {
				worst.loadUse = max(worst.loadUse, x.cpuUse())
			}
		}
		worst.srvWait, worst.loadWait = max(worst.srvWait, srvWait), max(worst.loadWait, loadWait)
		worst.srvOth, worst.loadOth = max(worst.srvOth, srvOth), max(worst.loadOth, loadOth)
		worst.steal = max(worst.steal, srvSteal, loadSteal)
		lw := fmt.Sprintf("%.0f%%", 100*loadWait)
		if s.wrk != nil {
			lw = "—"
		}
		join := func(f func(splitSummary) string) string { return strings.Join(cells(list, list, sums, f), " / ") }
		tableRow(w, r.mode, fmt.Sprint(r.conns),
			join(func(x splitSummary) string { return x.cpuCell(x.cpu) }),
			join(func(x splitSummary) string { return pct(x, x.cpuUse) }),
			join(func(x splitSummary) string { return pct(x, x.loadIRQ) }),
			fmt.Sprintf("%.0f%% / %s", 100*srvWait, lw), fmt.Sprintf("%.0f%% / %.0f%%", 100*srvOth, 100*loadOth),
			fmt.Sprintf("%.1f%% / %.1f%%", 100*srvSteal, 100*loadSteal))
	}
	fmt.Fprintf(w, "\nNoise, worst run: run-queue wait %.0f%% on CPU %d (direct runs), %.0f%% on CPU %d; other processes used up to %.0f%% of CPU %d and %.0f%% of CPU %d; steal up to %.1f%%.\n",
		100*worst.srvWait, s.srvCPU, 100*worst.loadWait, s.loadCPU, 100*worst.srvOth, s.srvCPU, 100*worst.loadOth, s.loadCPU, 100*worst.steal)
	if worst.srvOth > 0.05 || worst.loadOth > 0.05 || worst.steal > 0.05 {
		fmt.Fprintln(w, "**Note: the machine was busy** (other processes or steal above 5% of a CPU in some run): req/s and latencies measure the contention as much as the code; compare CPU per request, and rerun on a quiet machine for throughput.")
	} else {
		fmt.Fprintln(w, "Other processes and steal stayed within 5% of each CPU in every run: a quiet machine for these runs.")
	}
	if worst.loadUse > 0.95 {
		fmt.Fprintf(w, "**Note: the load generator used up to %.0f%% of CPU %d in proxied runs**: where it is saturated, the proxies' req/s are bounded by it and their ratio is pulled towards 1; the CPU-per-request columns still compare them.\n", 100*worst.loadUse, s.loadCPU)
	}

	var streams []*row
	for _, r := range rows {
		if r.mode == "stream" {
			streams = append(streams, r)
		}
	}
	if len(streams) > 0 {
		fmt.Fprint(w, "\nStreams, time to first body byte (p50; not measured by wrk: —) and events per response (direct and nginx clients ask for usage, as the gateway does upstream; the gateway strips the usage chunk its client did not ask for")
		if c := s.contender("bare"); c != nil {
			fmt.Fprint(w, "; bare gets the gateway client's request and relays the mock's stream as it comes")
		}
		if c := s.contender("baseline"); c != nil {
			fmt.Fprintf(w, "; %s gets the gateway client's request, as %s does", c.label, gw)
		}
		fmt.Fprintln(w, "):")
		fmt.Fprintln(w)
		head := append(append([]string{"c"}, labels(list, "%s ttfb p50")...), labels(list, "%s events")...)
		tableHead(w, 0, head...)
		for _, r := range streams {
			sums := summarizeRow(r, list)
			cs := append([]string{fmt.Sprint(r.conns)}, cells(list, list, sums, func(x splitSummary) string {
				if x.n == 0 || o.load == "wrk" {
					return "—"
				}
				return fmtDur(x.ttfb)
			})...)
			cs = append(cs, cells(list, list, sums, func(x splitSummary) string {
				if x.n == 0 {
					return "—"
				}
				return fmt.Sprint(x.events)
			})...)
			tableRow(w, cs...)
		}
	}
	printErrors(w, rows)
}

// cells2 is the summary of contender c among sums.
func sumOf(list []*contender, sums rowSums, c *contender) splitSummary {
	for i, l := range list {
		if l == c {
			return sums[i]
		}
	}
	return splitSummary{}
}

// printBudget says, row by row, whether the gateway's own CPU per request
// kept within floorBudget times the bare pass-through's (-floor).
func printBudget(w io.Writer, rows []*row, list []*contender, gw, bare *contender) {
	var parts []string
	over := 0
	for _, r := range rows {
		sums := summarizeRow(r, list)
		x := cpuRatio(sumOf(list, sums, gw), sumOf(list, sums, bare))
		if x == 0 {
			continue
		}
		verdict := "within"
		if x > floorBudget {
			verdict, over = "OVER", over+1
		}
		parts = append(parts, fmt.Sprintf("%s c=%d %.2f× (%s)", r.mode, r.conns, x, verdict))
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nBudget (issue 11): %s's own CPU per request ≤ %.2f× the bare pass-through's, measured in the same run: %s. ",
		gw.label, floorBudget, strings.Join(parts, "; "))
	if over == 0 {
		fmt.Fprintln(w, "Within it in every row.")
	} else {
		fmt.Fprintf(w, "**Over it in %d of %d rows.**\n", over, len(parts))
	}
}

// printBeforeAfter sums up the tree's binary against the baseline's, row by
// row: req/s and CPU per request, after ÷ before.
func printBeforeAfter(w io.Writer, rows []*row, list []*contender, gw, bl *contender) {
	var parts []string
	for _, r := range rows {
		sums := summarizeRow(r, list)
		g, b := sumOf(list, sums, gw), sumOf(list, sums, bl)
		if g.n == 0 || b.n == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s c=%d req/s %s, CPU/req %s", r.mode, r.conns, ratioCell(g, b), cpuRatioCell(g, b)))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "\nBefore/after, %s ÷ %s in the same run: %s.\n", gw.label, bl.label, strings.Join(parts, "; "))
	}
}
