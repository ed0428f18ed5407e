package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// splitSummary is the medians over a row's rounds for one contender in split
// placement.
type splitSummary struct {
	summary    // the load generator's view: req/s, latencies, its own CPU
	splitStats // the servers' CPU and the cores
	n          int
}

func summarizeSplit(rs []*result) splitSummary {
	s := splitSummary{summary: summarize(rs), n: len(rs)}
	var mockCPU, gwCPU, ngxCPU []time.Duration
	var use, wait, irq, lirq, oth, loth, st, lst []float64
	for _, r := range rs {
		x := splitStatsOf(r)
		mockCPU, gwCPU, ngxCPU = append(mockCPU, x.mockCPU), append(gwCPU, x.gwCPU), append(ngxCPU, x.ngxCPU)
		use, wait = append(use, x.srvUse), append(wait, x.srvWait)
		irq, lirq = append(irq, x.srvIRQ), append(lirq, x.loadIRQ)
		oth, loth = append(oth, x.srvOthers), append(loth, x.loadOthers)
		st, lst = append(st, x.srvSteal), append(lst, x.loadSteal)
	}
	s.splitStats = splitStats{mockCPU: medianDur(mockCPU), gwCPU: medianDur(gwCPU), ngxCPU: medianDur(ngxCPU), srvUse: median(use),
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

// addedCell is the p50 latency a proxy adds to the direct run's.
func addedCell(proxy, direct splitSummary) string {
	if proxy.n == 0 || direct.n == 0 {
		return "—"
	}
	return fmtDur(proxy.p50 - direct.p50)
}

// cutNote says which requests may end without a 200 in the usage log.
func cutNote(o options) string {
	if o.load == "wrk" {
		return "; wrk stops a run with requests in flight, whose rows say how the gateway saw them end"
	}
	return ""
}

func printSplitReport(w io.Writer, o options, s *splitEnv, rows []*row) {
	model := directModel + " (same name upstream: no model rewrite)"
	if o.mapped {
		model = mappedPublic + " → " + mappedUpstream + " (model rewritten in every gateway response and event)"
	}
	gw := s.gwLabel
	fmt.Fprintf(w, "## Rosetta pass-through vs nginx, split placement (DESIGN.md §5): %s\n\n", gw)
	fmt.Fprintf(w, "**%s**\n\n", gwNote(o))
	fmt.Fprintf(w, "- %s %s/%s, CPUs=%d; CPU %d: the servers (mock, %s, nginx), each a process of its own; CPU %d: the load generator\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), s.srvCPU, gw, s.loadCPU)
	if sh := s.shipped; sh != nil {
		f := s.shippedFacts()
		var gwReqs int
		for _, r := range rows {
			for _, x := range r.gateway {
				gwReqs += x.requests
			}
		}
		fmt.Fprintf(w, "- rosetta: `go build -o %s ./cmd/rosetta` of %s (%.1fs), started as `rosetta serve -config rosetta.yaml` in %s, GOMAXPROCS %s (its own default, from its CPU mask; read from its /metrics); "+
			"one openai channel to the mock, a static key, no store section (the default SQLite store, rosetta.db); log and access log: its default JSON through its async writer to stderr, sent to rosetta.log\n",
			sh.bin, sh.tree, sh.build.Seconds(), sh.dir, sh.gomaxprocs)
		if f.err != nil {
			fmt.Fprintf(w, "- **usage rows: cannot read them: %v**\n", f.err)
		} else {
			fmt.Fprintf(w, "- rosetta wrote %d usage rows into its SQLite file (by status: %s) for %d measured requests (and the warm-ups and checks%s), and %.1f MB of log (%.0f B per row)\n",
				f.rows, f.byStatus, gwReqs, cutNote(o), float64(f.logBytes)/1e6, float64(f.logBytes)/float64(max(f.rows, 1)))
		}
	}
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
	for _, p := range []*proc{s.mock, s.gateway, s.nginx} {
		if p == nil {
			continue
		}
		if _, err := checkPinned(p.name, p.pid(), s.srvCPU); err != nil {
			fmt.Fprintf(w, "- **PLACEMENT BROKEN at the end: %v**\n", err)
		}
	}
	if s.nginx != nil {
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

	fmt.Fprintf(w, "| mode | c | direct req/s | nginx req/s | %[1]s req/s | %[1]s/nginx | %[1]s/direct | direct p50 / p99 | nginx p50 / p99 | %[1]s p50 / p99 | added p50 nginx / %[1]s |\n", gw)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
		flag := ""
		if r.failed() {
			flag = " **ERRORS**"
		}
		fmt.Fprintf(w, "| %s%s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", r.mode, flag, r.conns,
			d.rpsCell(), n.rpsCell(), g.rpsCell(), ratioCell(g, n), ratioCell(g, d), d.lat(), n.lat(), g.lat(),
			addedCell(n, d), addedCell(g, d))
	}

	fmt.Fprintf(w, "\nCPU per request on CPU %d (from each process's /proc/<pid>/stat, 10 ms ticks), medians. The mock serves every run; nginx counts its master and worker; %s is its own process, so its figure is its own, measured, not estimated. \"used\" is the share of CPU %d that the mock, nginx and %s used, \"irq\" the share in interrupts (on loopback, much of the network stack runs there, charged to no process).\n\n", s.srvCPU, gw, s.srvCPU, gw)
	fmt.Fprintf(w, "| mode | c | mock, direct runs | mock, nginx runs | mock, %[1]s runs | nginx | %[1]s | %[1]s ÷ nginx | used d / n / g | irq d / n / g |\n", gw)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
		ownRatio := "—"
		if g.n > 0 && n.n > 0 && n.ngxCPU > 0 {
			ownRatio = fmt.Sprintf("%.2f×", float64(g.gwCPU)/float64(n.ngxCPU))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s / %s / %s |\n", r.mode, r.conns,
			d.cpuCell(d.mockCPU), n.cpuCell(n.mockCPU), g.cpuCell(g.mockCPU), n.cpuCell(n.ngxCPU), g.cpuCell(g.gwCPU), ownRatio,
			pct(d, d.srvUse), pct(n, n.srvUse), pct(g, g.srvUse), pct(d, d.srvIRQ), pct(n, n.srvIRQ), pct(g, g.srvIRQ))
	}

	fmt.Fprintf(w, "\nThe load generator on CPU %d, and noise: \"used\" is the share of CPU %d it used (near 100%% means it, not the proxy, may be the limit); run-queue wait is the time our threads were runnable but had no core, per window: pinned to one CPU, a process's threads also queue behind each other (the load generator's most: several threads, one CPU), so wait alone is not noise (on CPU %d it counts direct runs only: in proxied runs the mock and the proxy, two processes on one CPU, wait for each other; with wrk the load generator's wait is not measured: —); \"others\" is the share of a CPU that other processes used and steal what the hypervisor took: those two are the noise. Noise columns show the worst run of the row.\n\n", s.loadCPU, s.loadCPU, s.srvCPU)
	fmt.Fprintf(w, "| mode | c | load CPU/req d / n / g | CPU %d used d / n / g | CPU %d irq d / n / g | wait CPU %d / CPU %d | others CPU %d / CPU %d | steal CPU %d / CPU %d |\n",
		s.loadCPU, s.loadCPU, s.srvCPU, s.loadCPU, s.srvCPU, s.loadCPU, s.srvCPU, s.loadCPU)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	var worst struct{ srvWait, loadWait, srvOth, loadOth, steal, loadUse float64 }
	for _, r := range rows {
		d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
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
		fmt.Fprintf(w, "| %s | %d | %s / %s / %s | %s / %s / %s | %s / %s / %s | %.0f%% / %s | %.0f%% / %.0f%% | %.1f%% / %.1f%% |\n",
			r.mode, r.conns, d.cpuCell(d.cpu), n.cpuCell(n.cpu), g.cpuCell(g.cpu),
			pct(d, d.cpuUse), pct(n, n.cpuUse), pct(g, g.cpuUse), pct(d, d.loadIRQ), pct(n, n.loadIRQ), pct(g, g.loadIRQ),
			100*srvWait, lw, 100*srvOth, 100*loadOth, 100*srvSteal, 100*loadSteal)
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
		fmt.Fprintln(w, "\nStreams, time to first body byte (p50; not measured by wrk: —) and events per response (direct and nginx clients ask for usage, as the gateway does upstream; the gateway strips the usage chunk its client did not ask for):")
		fmt.Fprintf(w, "\n| c | direct ttfb p50 | nginx ttfb p50 | %[1]s ttfb p50 | direct events | nginx events | %[1]s events |\n", gw)
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range streams {
			d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
			ttfb := func(s splitSummary) string {
				if s.n == 0 || o.load == "wrk" {
					return "—"
				}
				return fmtDur(s.ttfb)
			}
			events := func(s splitSummary) string {
				if s.n == 0 {
					return "—"
				}
				return fmt.Sprint(s.events)
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", r.conns, ttfb(d), ttfb(n), ttfb(g), events(d), events(n), events(g))
		}
	}
	printErrors(w, rows)
}
