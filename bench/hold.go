package main

// Hold mode (-hold N -hold-for D): what open streams cost the gateway in
// memory and file descriptors, as the operating system sees it.
//
// The harness re-executes itself as a gateway process (-serve-role=gateway,
// the gateway alone, configured as the bench's in-process gateway is, with
// its access log through asynclog) in front of a mock upstream that runs in
// this process and streams slowly: one event every -hold-every, for longer
// than the hold. This process opens N streams through the gateway (each up
// to its first event), holds them for D while it reads the gateway
// process's VmRSS from /proc/<pid>/status and counts /proc/<pid>/fd, then
// closes them and checks that the descriptors go back.
//
// RSS per stream is (RSS with N streams open − RSS before the first one) / N,
// after one warm-up request, so it holds the per-stream share of heap,
// goroutine stacks, buffers and whatever GC headroom the runtime keeps for
// them. "Flat" means the RSS samples over the hold stay within 10% of the
// first one. A last sample follows a forced collection (debug.FreeOSMemory),
// the streams still open: goroutine stacks shrink only in a collection.
// -hold-heap has the gateway process write its heap profile right after
// that collection, so that the hold's samples are the same with it or
// without it.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// holdOptions are the flags of hold mode.
type holdOptions struct {
	streams int
	holdFor time.Duration
	every   time.Duration // between upstream events
	sample  time.Duration // between RSS samples
	gogc    string        // GOGC of the gateway process; "" inherits this one's
	bare    bool          // the bare pass-through in the gateway's place
	heap    string        // file the gateway process writes its heap profile to after the last collection; "" for none
	mock    string        // the mock upstream's server (-mock)
}

// gatewayMain is the gateway process of hold mode: the gateway (or, with
// bare, the bare pass-through) alone, in front of the mock at -mock, until
// its standard input ends. For each line it reads it writes its runtime's
// memory statistics (parseMem's line); a line "gc" first collects and
// returns the free memory to the OS (debug.FreeOSMemory), and "gc FILE"
// then writes its heap profile to FILE, or answers "error MESSAGE" when it
// cannot.
func gatewayMain(mockAddr, logMode string, bare bool) int {
	var addr string
	if bare {
		p, a, err := startBare(mockAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench bare:", err)
			return 1
		}
		defer p.close()
		addr = a
	} else {
		e, err := startGateway(options{log: logMode}, mockAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench gateway:", err)
			return 1
		}
		defer e.close()
		addr = e.gwAddr
	}
	fmt.Printf("ready gateway=%s\n", addr)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(holdAnswer(sc.Text()))
	}
	return 0
}

// holdAnswer is the gateway process's answer to line (see gatewayMain).
// The statistics are read before the profile is written, which allocates.
func holdAnswer(line string) string {
	ask, file, _ := strings.Cut(line, " ")
	if ask == "gc" {
		debug.FreeOSMemory()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if ask == "gc" {
		if err := writeHeapProfile(file); err != nil {
			return "error " + err.Error()
		}
	}
	return fmt.Sprintf("mem heap_inuse=%d stack_inuse=%d heap_idle=%d heap_released=%d goroutines=%d gcs=%d",
		m.HeapInuse, m.StackInuse, m.HeapIdle, m.HeapReleased, runtime.NumGoroutine(), m.NumGC)
}

// writeHeapProfile writes the live heap to file ("": none), as pprof's
// inuse_space saw it at the last collection: the caller has just run one.
func writeHeapProfile(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cannot create heap profile: %w", err)
	}
	err = pprof.Lookup("heap").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write heap profile %s: %w", file, err)
	}
	return nil
}

// memStats is the gateway process's runtime view of its memory.
type memStats struct {
	heapInuse, stackInuse, heapIdle, heapReleased, goroutines, gcs int64
}

// parseMem reads a "mem ..." line of the gateway process.
func parseMem(line string) (memStats, bool) {
	var m memStats
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "mem ")
	if !ok {
		return m, false
	}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return m, false
		}
		switch k {
		case "heap_inuse":
			m.heapInuse = n
		case "stack_inuse":
			m.stackInuse = n
		case "heap_idle":
			m.heapIdle = n
		case "heap_released":
			m.heapReleased = n
		case "goroutines":
			m.goroutines = n
		case "gcs":
			m.gcs = n
		}
	}
	return m, true
}

// holdSample is one reading of the gateway process.
type holdSample struct {
	at   time.Duration // since the streams were all open
	rss  int64         // bytes
	fds  int
	open int64 // streams still open on the client side
	mem  memStats
}

// runHold runs hold mode and prints its report to out. It reports false
// when streams failed or were lost during the hold.
func runHold(o options, h holdOptions, out, progress io.Writer) (bool, error) {
	if runtime.GOOS != "linux" {
		return false, errors.New("-hold reads /proc: Linux only")
	}
	// The streams must outlast the opening (which can take minutes for
	// thousands of streams on a busy machine) and the hold; a stream that
	// ends early is reported as lost.
	events := int((h.holdFor+10*time.Minute)/h.every) + 10
	m, err := startMock(h.mock, events, h.every, upstreamKey)
	if err != nil {
		return false, fmt.Errorf("cannot start the mock upstream: %w", err)
	}
	defer m.close()

	if h.heap != "" {
		if h.heap, err = filepath.Abs(h.heap); err != nil {
			return false, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, serveRoleFlag+"gateway", "-mock="+m.addr, "-log="+o.log, "-bare="+strconv.FormatBool(o.bare))
	cmd.Stderr = os.Stderr
	if h.gogc != "" {
		cmd.Env = append(os.Environ(), "GOGC="+h.gogc)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return false, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	prepareCmd(cmd)
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("cannot start the gateway process: %w", err)
	}
	p := &proc{name: "gateway process", cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	defer p.stop()
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewScanner(stdout)
		for r.Scan() {
			lines <- r.Text()
		}
		close(lines)
	}()
	line, err := readyLine(p, lines)
	if err != nil {
		return false, err
	}
	// mem asks the gateway process for its runtime's statistics.
	mem := func(s *holdSample, ask string) error {
		if _, err := io.WriteString(stdin, ask); err != nil {
			return err
		}
		select {
		case l := <-lines:
			if msg, failed := strings.CutPrefix(l, "error "); failed {
				return errors.New("the gateway process: " + msg)
			}
			m, ok := parseMem(l)
			if !ok {
				return fmt.Errorf("the gateway process answered %q", l)
			}
			s.mem = m
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the gateway process did not report its memory")
		}
	}
	gwAddr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready gateway=")
	if !ok {
		return false, fmt.Errorf("the gateway process reported %q, want \"ready gateway=ADDR\"", line)
	}
	pid := p.pid()

	// One stream from start to end first, so that what is measured next is
	// the streams, not the first request's one-time set-up.
	warm, err := openHoldStream(gwAddr)
	if err != nil {
		return false, fmt.Errorf("warm-up stream: %w", err)
	}
	warm.Close()
	time.Sleep(time.Second)
	base, err := readProc(pid)
	if err == nil {
		err = mem(&base, "mem\n")
	}
	if err != nil {
		return false, err
	}
	fmt.Fprintf(progress, "hold: gateway pid %d, baseline RSS %.1f MiB, %d fds; opening %d streams (one event every %v)\n",
		pid, mib(base.rss), base.fds, h.streams, h.every)

	var open atomic.Int64
	conns := make([]net.Conn, h.streams)
	defer closeAll(conns) // on a failure; the end of the hold closes them first
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	t0 := time.Now()
	for i := range conns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := openHoldStream(gwAddr)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			conns[i] = c
			open.Add(1)
			go drainHold(c, &open)
		}()
	}
	wg.Wait()
	opened := open.Load()
	fmt.Fprintf(progress, "hold: %d streams open in %v, %d failed%s\n", opened, time.Since(t0).Round(time.Millisecond),
		failed.Load(), errNote(firstErr.Load()))
	if opened == 0 {
		return false, errors.New("no stream could be opened")
	}

	var samples []holdSample
	start := time.Now()
	for {
		last := time.Since(start) >= h.holdFor
		s, err := readProc(pid)
		if err == nil {
			err = mem(&s, "mem\n")
		}
		if err != nil {
			return false, err
		}
		s.at, s.open = time.Since(start), open.Load()
		samples = append(samples, s)
		per := func(now, then int64) float64 { return kib(now-then) / float64(opened) }
		fmt.Fprintf(progress, "hold: %6s  RSS %7.1f MiB  %6.1f KiB/stream (heap in use %.1f, stacks %.1f, heap idle not released %.1f)  fds %5d  streams open %d  goroutines %d  GCs %d\n",
			s.at.Round(time.Second), mib(s.rss), per(s.rss, base.rss), per(s.mem.heapInuse, base.mem.heapInuse),
			per(s.mem.stackInuse, base.mem.stackInuse),
			per(s.mem.heapIdle-s.mem.heapReleased, base.mem.heapIdle-base.mem.heapReleased),
			s.fds, s.open, s.mem.goroutines, s.mem.gcs)
		if last {
			break
		}
		time.Sleep(min(h.sample, h.holdFor-s.at))
	}
	// What the streams hold once the garbage is collected and the free
	// memory given back (goroutine stacks shrunk to their use, which only
	// a collection does): the RSS the streams alone keep. The heap
	// profile, if asked for, is of that collection.
	var collected holdSample
	ask := "gc\n"
	if h.heap != "" {
		ask = "gc " + h.heap + "\n"
	}
	if err = mem(&collected, ask); err == nil {
		var p holdSample
		if p, err = readProc(pid); err == nil {
			collected.rss, collected.fds = p.rss, p.fds
		}
	}
	if err != nil {
		return false, err
	}
	closeAll(conns)
	var after holdSample
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		if after, err = readProc(pid); err != nil {
			return false, err
		}
		if after.fds <= base.fds || time.Now().After(deadline) {
			break
		}
	}
	lost := opened - samples[len(samples)-1].open
	ok = printHold(out, h, base, opened, failed.Load(), lost, samples, collected, after)
	return ok, nil
}

// closeAll closes the streams that were opened.
func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// readyLine waits for the first line of a child's standard output.
func readyLine(p *proc, lines <-chan string) (string, error) {
	select {
	case line := <-lines:
		return line, nil
	case <-p.done:
		return "", fmt.Errorf("the %s exited before it was ready: %v", p.name, p.err)
	case <-time.After(20 * time.Second):
		return "", fmt.Errorf("the %s did not report ready within 20s", p.name)
	}
}

var holdRequest = func() []byte {
	body := chatBody(directModel, true, false)
	return fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", gatewayKey, len(body), body)
}()

// openHoldStream sends a streamed request and reads up to its first event.
func openHoldStream(addr string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
	if _, err := c.Write(holdRequest); err != nil {
		c.Close()
		return nil, err
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("data:")) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("before the first event: %w (got %.200q)", err, got)
		}
	}
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 200")) {
		c.Close()
		return nil, fmt.Errorf("got %.200q", got)
	}
	c.SetDeadline(time.Time{}) //nolint:errcheck
	return c, nil
}

// drainHold reads a held stream until it ends (its last event, or the
// connection), and counts it closed then.
func drainHold(c net.Conn, open *atomic.Int64) {
	defer open.Add(-1)
	const done = "data: [DONE]"
	var buf [512 + len(done)]byte
	kept := 0 // the previous read's tail, for a marker split across reads
	for {
		n, err := c.Read(buf[kept:])
		if err != nil {
			return
		}
		n += kept
		if bytes.Contains(buf[:n], []byte(done)) {
			return
		}
		kept = copy(buf[:], buf[max(0, n-len(done)+1):n])
	}
}

// readProc reads a process's resident set size and open descriptors.
func readProc(pid int) (holdSample, error) {
	var s holdSample
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v) // "12345 kB"
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					s.rss = kb << 10
				}
			}
		}
	}
	if s.rss == 0 {
		return s, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	return s, nil
}

// printHold prints hold mode's report and tells whether it passed: every
// stream opened and stayed open, RSS flat, descriptors back at the end.
func printHold(w io.Writer, h holdOptions, base holdSample, opened, failed, lost int64, samples []holdSample, collected, after holdSample) bool {
	first := samples[0]
	lo, hi := first.rss, first.rss
	for _, s := range samples {
		lo, hi = min(lo, s.rss), max(hi, s.rss)
	}
	last := samples[len(samples)-1]
	drift := float64(last.rss-first.rss) / float64(first.rss)
	flat := float64(hi-first.rss) <= 0.1*float64(first.rss) && float64(first.rss-lo) <= 0.1*float64(first.rss)
	perStream := func(s holdSample) float64 { return kib(s.rss-base.rss) / float64(opened) }
	what := "gateway process"
	if h.bare {
		what = "**bare fasthttp pass-through** process (bench/bare.go), not Rosetta"
	}
	fmt.Fprintf(w, "\n## Open streams: %d held for %v (%s, GOGC=%s; mock %s)\n\n", opened, h.holdFor, what, orDefault(h.gogc, os.Getenv("GOGC"), "100"), h.mock)
	fmt.Fprintln(w, "| | RSS | RSS per stream | open fds |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| before (1 warm-up stream done) | %.1f MiB | | %d |\n", mib(base.rss), base.fds)
	fmt.Fprintf(w, "| all open | %.1f MiB | %.1f KiB | %d |\n", mib(first.rss), perStream(first), first.fds)
	fmt.Fprintf(w, "| end of hold | %.1f MiB | %.1f KiB | %d |\n", mib(last.rss), perStream(last), last.fds)
	fmt.Fprintf(w, "| min / max over the hold | %.1f / %.1f MiB | %.1f / %.1f KiB | |\n", mib(lo), mib(hi),
		kib(lo-base.rss)/float64(opened), kib(hi-base.rss)/float64(opened))
	fmt.Fprintf(w, "| then collected (debug.FreeOSMemory) | %.1f MiB | %.1f KiB | %d |\n", mib(collected.rss), perStream(collected), collected.fds)
	fmt.Fprintf(w, "| streams closed | %.1f MiB | | %d |\n\n", mib(after.rss), after.fds)
	d := func(now, then int64) float64 { return kib(now-then) / float64(opened) }
	fmt.Fprintf(w, "Per stream at the end of the hold, from the gateway's runtime: heap in use %.1f KiB, goroutine stacks %.1f KiB, "+
		"heap idle but not returned to the OS %.1f KiB (%d goroutines, %d GCs so far).\n",
		d(last.mem.heapInuse, base.mem.heapInuse), d(last.mem.stackInuse, base.mem.stackInuse),
		d(last.mem.heapIdle-last.mem.heapReleased, base.mem.heapIdle-base.mem.heapReleased), last.mem.goroutines, last.mem.gcs)
	fmt.Fprintf(w, "Collected, streams still open: heap in use %.1f KiB, goroutine stacks %.1f KiB per stream.\n",
		d(collected.mem.heapInuse, base.mem.heapInuse), d(collected.mem.stackInuse, base.mem.stackInuse))
	verdict := "flat (within 10% of the first sample)"
	if !flat {
		verdict = "NOT flat (outside 10% of the first sample)"
	}
	fmt.Fprintf(w, "RSS over the hold: %+.1f%% first to last, %s; %d samples.\n", 100*drift, verdict, len(samples))
	fmt.Fprintf(w, "Streams: %d opened, %d failed to open, %d ended during the hold.\n", opened, failed, lost)
	fdsBack := after.fds <= base.fds
	if !fdsBack {
		fmt.Fprintf(w, "Open fds did NOT go back to %d after the streams closed (%d).\n", base.fds, after.fds)
	}
	return failed == 0 && lost == 0 && flat && fdsBack
}

func orDefault(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func errNote(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(" (first: %s)", v)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
func kib(b int64) float64 { return float64(b) / (1 << 10) }
