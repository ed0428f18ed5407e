package main

// -load wrk: Debian's wrk generates split placement's load instead of the
// built-in fasthttp client, pinned to the load generator's CPU with one
// thread (-t 1), the POST's body and headers set by a small Lua script.
// Each run is a warm-up wrk run (unmeasured) and a measured one; the
// table's req/s and p50/p99 are wrk's own (--latency), the load
// generator's CPU is the wrk process's (its rusage), and the servers'
// figures are sampled around the measured run. wrk reads a streamed
// response to its end (chunked encoding) but does not check its events:
// a probe before each run does, and supplies the sample. wrk's durations
// are whole seconds: -d and -warmup are rounded up.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkFigures are what wrk reports of a run.
type wrkFigures struct {
	rps                float64
	p50, p99, max      time.Duration
	requests, non2xx   int64
	connErr, readErr   int64
	writeErr, timeouts int64
	duration           time.Duration
}

// wrkRunner runs wrk pinned to one CPU, with its scripts in a directory.
type wrkRunner struct {
	bin, version, dir string
	cpu               int
	proof             string // where the first measured run ran
}

const wrkMissing = "-load wrk: no wrk binary on PATH; install it (Debian: apt-get install -y wrk)"

// findWrk returns the path of the wrk binary, or "".
func findWrk() string {
	if p, err := exec.LookPath("wrk"); err == nil {
		return p
	}
	return ""
}

func newWrkRunner(cpu int) (*wrkRunner, error) {
	bin := findWrk()
	if bin == "" {
		return nil, errors.New(wrkMissing)
	}
	// wrk -v prints its version and usage, and exits 1.
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	version := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if !strings.HasPrefix(version, "wrk ") {
		return nil, fmt.Errorf("%s -v: not wrk? %q", bin, tail(out, 300))
	}
	dir, err := os.MkdirTemp("", "rosetta-bench-wrk-")
	if err != nil {
		return nil, err
	}
	return &wrkRunner{bin: bin, version: strings.Fields(version)[1], dir: dir, cpu: cpu}, nil
}

func (w *wrkRunner) close() { os.RemoveAll(w.dir) } //nolint:errcheck

// luaString quotes s as a Lua string literal.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// wrkScript is the Lua script of a target: its method, path, headers, and
// its body read from a file.
func wrkScript(t target, bodyFile string) string {
	var b strings.Builder
	b.WriteString("-- Written by Rosetta's load harness (bench/wrk.go).\n")
	fmt.Fprintf(&b, "local f = assert(io.open(%s, \"rb\"))\nwrk.body = f:read(\"*a\")\nf:close()\n", luaString(bodyFile))
	b.WriteString("wrk.method = \"POST\"\n")
	fmt.Fprintf(&b, "wrk.path = %s\n", luaString(t.path()))
	headers := [][2]string{{"Content-Type", "application/json"}, {"Authorization", "Bearer " + t.auth},
		{"User-Agent", "rosetta-bench-wrk/1"}}
	if t.stream {
		headers = append(headers, [2]string{"Accept", "text/event-stream"})
	}
	if t.anthropic {
		headers = append(headers, [2]string{"anthropic-version", "2023-06-01"})
	}
	for _, h := range headers {
		fmt.Fprintf(&b, "wrk.headers[%s] = %s\n", luaString(h[0]), luaString(h[1]))
	}
	return b.String()
}

// wrkSeconds is d rounded up to whole seconds, at least 1: wrk's -d.
func wrkSeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// loadWrk runs wrk against t as spec says (closed loop), and returns the
// run's result as load does.
func (s *splitEnv) loadWrk(t target, spec runSpec) *result {
	w := s.wrk
	r := &result{target: t.name, conns: spec.conns, cores: 1}
	fail := func(err error) *result {
		r.errors++
		if r.firstError == "" {
			r.firstError = err.Error()
		}
		r.window = spec.dur
		r.wrk = &wrkFigures{}
		return r
	}
	// The probe checks a whole exchange, which wrk does not, and keeps its
	// body as the run's sample.
	status, _, body, err := probe(t)
	if err == nil && status != 200 {
		err = fmt.Errorf("probe: status %d: %.300s", status, body)
	}
	if err != nil {
		return fail(err)
	}
	r.sample = body

	base := filepath.Join(w.dir, fmt.Sprintf("%s-stream-%v", t.name, t.stream))
	if err := os.WriteFile(base+".json", t.body, 0o644); err != nil {
		return fail(err)
	}
	script := base + ".lua"
	if err := os.WriteFile(script, []byte(wrkScript(t, base+".json")), 0o644); err != nil {
		return fail(err)
	}
	args := func(d time.Duration) []string {
		return []string{"-t", "1", "-c", strconv.Itoa(spec.conns), "-d", strconv.Itoa(wrkSeconds(d)) + "s",
			"--timeout", "30s", "--latency", "-s", script, "http://" + t.addr + t.path()}
	}
	if spec.warmup > 0 {
		if _, _, _, err := w.run(args(spec.warmup), nil); err != nil {
			return fail(fmt.Errorf("warm-up: %w", err))
		}
	}
	var s0 splitSample
	if spec.sample != nil {
		s0 = spec.sample()
	}
	out, cpu, window, err := w.run(args(spec.dur), func(pid int) {
		if w.proof == "" {
			time.Sleep(100 * time.Millisecond) // its thread started
			if p, err := checkPinned("wrk "+w.version+" (-t 1)", pid, w.cpu); err == nil {
				w.proof = p
			} else {
				w.proof = "NOT PINNED: " + err.Error()
			}
		}
	})
	if spec.sample != nil {
		d := spec.sample().sub(s0)
		r.split = &d
	}
	if err != nil {
		return fail(err)
	}
	f, err := parseWrk(out)
	if err != nil {
		return fail(err)
	}
	r.wrk, r.cpu, r.window = f, cpu, window
	r.requests = int(f.requests - f.non2xx)
	r.non200 = int(f.non2xx)
	r.errors = int(f.connErr + f.readErr + f.writeErr + f.timeouts)
	if r.failed() && r.firstError == "" {
		r.firstError = fmt.Sprintf("wrk: %d non-2xx, socket errors connect %d, read %d, write %d, timeout %d",
			f.non2xx, f.connErr, f.readErr, f.writeErr, f.timeouts)
	}
	return r
}

// run runs wrk pinned to its CPU and returns its output, its CPU time and
// how long it ran; started, if not nil, is called with its pid.
func (w *wrkRunner) run(args []string, started func(pid int)) (out []byte, cpu, ran time.Duration, err error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(w.bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	prepareCmd(cmd)
	t0 := time.Now()
	if err := startPinned(cmd, w.cpu); err != nil {
		return nil, 0, 0, fmt.Errorf("cannot start wrk: %w", err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	err = cmd.Wait()
	ran = time.Since(t0)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil {
		return nil, cpu, ran, fmt.Errorf("wrk %s: %w: %s%s", strings.Join(args, " "), err, tail(stderr.Bytes(), 500), tail(stdout.Bytes(), 1000))
	}
	return stdout.Bytes(), cpu, ran, nil
}

var (
	wrkSummaryRE = regexp.MustCompile(`(\d+) requests in ([\d.]+)(us|ms|s|m|h)`)
	wrkRPSRE     = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkPctRE     = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$`)
	wrkMaxRE     = regexp.MustCompile(`(?m)^\s+Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m|h)`)
	wrkNon2xxRE  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSockRE    = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrkDur reads one of wrk's times: a number and a unit.
func wrkDur(num, unit string) time.Duration {
	v, _ := strconv.ParseFloat(num, 64)
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
		"m": time.Minute, "h": time.Hour}[unit]
	return time.Duration(v * float64(scale))
}

// parseWrk reads the output of `wrk --latency`.
func parseWrk(out []byte) (*wrkFigures, error) {
	s := string(out)
	f := &wrkFigures{}
	m := wrkSummaryRE.FindStringSubmatch(s)
	rps := wrkRPSRE.FindStringSubmatch(s)
	if m == nil || rps == nil {
		return nil, fmt.Errorf("wrk's output has no \"N requests in T\" or \"Requests/sec\":\n%s", tail(out, 1500))
	}
	f.requests, _ = strconv.ParseInt(m[1], 10, 64)
	f.duration = wrkDur(m[2], m[3])
	f.rps, _ = strconv.ParseFloat(rps[1], 64)
	if f.requests > 0 {
		pcts := wrkPctRE.FindAllStringSubmatch(s, -1)
		mx := wrkMaxRE.FindStringSubmatch(s)
		if len(pcts) != 2 || mx == nil {
			return nil, fmt.Errorf("wrk's output has no latency distribution (--latency) or max:\n%s", tail(out, 1500))
		}
		for _, p := range pcts {
			if p[1] == "50" {
				f.p50 = wrkDur(p[2], p[3])
			} else {
				f.p99 = wrkDur(p[2], p[3])
			}
		}
		f.max = wrkDur(mx[1], mx[2])
	}
	if m := wrkNon2xxRE.FindStringSubmatch(s); m != nil {
		f.non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSockRE.FindStringSubmatch(s); m != nil {
		f.connErr, _ = strconv.ParseInt(m[1], 10, 64)
		f.readErr, _ = strconv.ParseInt(m[2], 10, 64)
		f.writeErr, _ = strconv.ParseInt(m[3], 10, 64)
		f.timeouts, _ = strconv.ParseInt(m[4], 10, 64)
	}
	return f, nil
}
