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
	var srvCPU, ngxCPU []time.Duration
	var use, wait, irq, lirq, oth, loth, st, lst []float64
	for _, r := range rs {
		x := splitStatsOf(r)
		srvCPU, ngxCPU = append(srvCPU, x.srvCPU), append(ngxCPU, x.ngxCPU)
		use, wait = append(use, x.srvUse), append(wait, x.srvWait)
		irq, lirq = append(irq, x.srvIRQ), append(lirq, x.loadIRQ)
		oth, loth = append(oth, x.srvOthers), append(loth, x.loadOthers)
		st, lst = append(st, x.srvSteal), append(lst, x.loadSteal)
	}
	s.splitStats = splitStats{srvCPU: medianDur(srvCPU), ngxCPU: medianDur(ngxCPU), srvUse: median(use),
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
	return fmtDur(s.p50) + " / " + fmtDur(s.p99)
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

func printSplitReport(w io.Writer, o options, s *splitEnv, rows []*row) {
	model := directModel + " (same name upstream: no model rewrite)"
	if o.mapped {
		model = mappedPublic + " → " + mappedUpstream + " (model rewritten in every gateway response and event)"
	}
	fmt.Fprintf(w, "## Rosetta pass-through vs nginx, split placement (DESIGN.md §5)\n\n")
	if o.bare {
		fmt.Fprintf(w, "**-bare: the \"gateway\" columns are the bare fasthttp pass-through (bench/bare.go), not Rosetta.**\n\n")
	}
	fmt.Fprintf(w, "- %s %s/%s, CPUs=%d; CPU %d: the servers (and nginx), CPU %d: the load generator\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), s.srvCPU, s.loadCPU)
	for _, p := range s.proof {
		fmt.Fprintf(w, "- pinned at start: %s\n", p)
	}
	// Checked again now: a process that moved would void the numbers.
	for _, p := range []*proc{s.servers, s.nginx} {
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
	fmt.Fprintf(w, "- model: %s; streams: %d content chunks (+ role, finish, usage, [DONE]), event delay %s; gateway access log: %s\n",
		model, o.events, o.eventDelay, o.log)
	printRate(w, o)
	fmt.Fprintln(w)

	fmt.Fprintln(w, "| mode | c | direct req/s | nginx req/s | gateway req/s | gateway/nginx | gateway/direct | direct p50 / p99 | nginx p50 / p99 | gateway p50 / p99 | added p50 nginx / gateway |")
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

	fmt.Fprintf(w, "\nCPU per request on CPU %d (from /proc/<pid>/stat, 10 ms ticks), medians. The servers process runs the mock in every run, and the gateway too in gateway runs; nginx counts its master and worker. The gateway's own share is estimated as the servers process in gateway runs less the mock's cost behind a proxy (the servers process in nginx runs; without nginx, in direct runs). \"used\" is the share of CPU %d that the servers process and nginx used, \"irq\" the share in interrupts (on loopback, much of the network stack runs there, charged to no process).\n\n", s.srvCPU, s.srvCPU)
	fmt.Fprintln(w, "| mode | c | servers, direct runs (mock) | servers, nginx runs (mock) | nginx | servers, gateway runs (mock + gateway) | gateway's own ≈ | gateway's own ÷ nginx | used d / n / g | irq d / n / g |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
		mockCPU := d.srvCPU
		if n.n > 0 {
			mockCPU = n.srvCPU
		}
		own, ownRatio := "—", "—"
		if g.n > 0 && (n.n > 0 || d.n > 0) {
			own = fmt.Sprintf("%.1fµs", us(g.srvCPU-mockCPU))
			if n.n > 0 && n.ngxCPU > 0 {
				ownRatio = fmt.Sprintf("%.2f×", float64(g.srvCPU-mockCPU)/float64(n.ngxCPU))
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s / %s / %s |\n", r.mode, r.conns,
			d.cpuCell(d.srvCPU), n.cpuCell(n.srvCPU), n.cpuCell(n.ngxCPU), g.cpuCell(g.srvCPU), own, ownRatio,
			pct(d, d.srvUse), pct(n, n.srvUse), pct(g, g.srvUse), pct(d, d.srvIRQ), pct(n, n.srvIRQ), pct(g, g.srvIRQ))
	}

	fmt.Fprintf(w, "\nThe load generator on CPU %d, and noise: \"used\" is the share of CPU %d it used (near 100%% means it, not the proxy, may be the limit); run-queue wait is the time our threads were runnable but had no core, per window: pinned to one CPU, a process's threads also queue behind each other (the load generator's most: several threads, one CPU), so wait alone is not noise (on CPU %d it counts direct and gateway runs only: in nginx runs the mock and nginx wait for each other); \"others\" is the share of a CPU that other processes used and steal what the hypervisor took: those two are the noise. Noise columns show the worst run of the row.\n\n", s.loadCPU, s.loadCPU, s.srvCPU)
	fmt.Fprintf(w, "| mode | c | load CPU/req d / n / g | CPU %d used d / n / g | CPU %d irq d / n / g | wait CPU %d / CPU %d | others CPU %d / CPU %d | steal CPU %d / CPU %d |\n",
		s.loadCPU, s.loadCPU, s.srvCPU, s.loadCPU, s.srvCPU, s.loadCPU, s.srvCPU, s.loadCPU)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	var worst struct{ srvWait, loadWait, srvOth, loadOth, steal, loadUse float64 }
	for _, r := range rows {
		d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
		var srvWait, loadWait, srvOth, loadOth, srvSteal, loadSteal float64
		for _, x := range r.all() {
			st := splitStatsOf(x)
			if x.target != "nginx" {
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
		fmt.Fprintf(w, "| %s | %d | %s / %s / %s | %s / %s / %s | %s / %s / %s | %.0f%% / %.0f%% | %.0f%% / %.0f%% | %.1f%% / %.1f%% |\n",
			r.mode, r.conns, d.cpuCell(d.cpu), n.cpuCell(n.cpu), g.cpuCell(g.cpu),
			pct(d, d.cpuUse), pct(n, n.cpuUse), pct(g, g.cpuUse), pct(d, d.loadIRQ), pct(n, n.loadIRQ), pct(g, g.loadIRQ),
			100*srvWait, 100*loadWait, 100*srvOth, 100*loadOth, 100*srvSteal, 100*loadSteal)
	}
	fmt.Fprintf(w, "\nNoise, worst run: run-queue wait %.0f%% on CPU %d, %.0f%% on CPU %d; other processes used up to %.0f%% of CPU %d and %.0f%% of CPU %d; steal up to %.1f%%.\n",
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
		fmt.Fprintln(w, "\nStreams, time to first body byte (p50) and events per response (direct and nginx clients ask for usage, as the gateway does upstream; the gateway strips the usage chunk its client did not ask for):")
		fmt.Fprintln(w, "\n| c | direct ttfb p50 | nginx ttfb p50 | gateway ttfb p50 | direct events | nginx events | gateway events |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range streams {
			d, n, g := summarizeSplit(r.direct), summarizeSplit(r.nginx), summarizeSplit(r.gateway)
			ttfb := func(s splitSummary) string {
				if s.n == 0 {
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
