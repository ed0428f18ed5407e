package main

// Split placement (-placement split), the placement of DESIGN.md §5:
// "gateway and mock on one core, load generator on the other".
//
// Every server runs in a process of its own, pinned to the first CPU this
// process may use (the servers' CPU):
//
//   - the mock upstream: the harness re-executed with the hidden first
//     argument -serve-role=mock, GOMAXPROCS=1;
//   - the gateway: by default (-gateway shipped) the real `rosetta serve`
//     binary, built from this tree at start (shipped.go), with a
//     configuration file as a user writes it; with -gateway inprocess the
//     proxy package inside the bench binary (-serve-role=gateway, no store);
//     with -bare the bare pass-through (-serve-role=gateway -bare);
//   - with -nginx, an nginx (one worker, a generated configuration in a
//     temporary directory) in front of the same mock;
//   - with -floor, the bare pass-through (-serve-role=gateway -bare, as
//     with -bare) beside the gateway, in front of the same mock;
//   - with -baseline REV, a second shipped binary, built from git revision
//     REV (baseline.go), in a directory and with a configuration of its own.
//
// These are the contenders (contender, in main.go): direct (the mock
// itself), nginx, the gateway, bare and baseline, in that order, a list
// that the runs, the samples of their processes' CPU and the report go
// over; each round rotates it by one.
//
// The ready servers report their addresses on their standard output. This
// process then pins itself to the second CPU (GOMAXPROCS=1) and generates
// the load, or with -load wrk starts wrk pinned there for each run
// (wrk.go). Each server's CPU time comes from its own /proc/<pid>/stat.
//
// Pinning: a child inherits the CPU mask of the thread that forks it, so
// the harness starts every child from a locked thread narrowed to the CPU
// (what `taskset -c N` does, without needing taskset); nginx's workers
// inherit the mask from their master. Every thread's Cpus_allowed_list is
// checked after the start and again in the report.
//
// Clean-up: the bench's own children exit when their standard input ends
// (this process closes it, or dies); every child is in a process group of
// its own, gets SIGTERM from the kernel should this process die
// (Pdeathsig), and is stopped, with the temporary directories removed, on
// return, on error and on SIGINT, SIGTERM or SIGHUP. The shipped binary
// stops on SIGTERM as under systemd: it drains and writes its last usage
// rows.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveRoleFlag starts the first argument of the servers process.
const serveRoleFlag = "-serve-role="

// serveMain is a server process of split placement or hold mode: role mock
// starts the mock upstream, writes "ready mock=ADDR" on its standard output
// and serves until its standard input ends or a signal arrives; role
// gateway is gatewayMain.
func serveMain(args []string) int {
	fs := flag.NewFlagSet("bench servers", flag.ContinueOnError)
	role := fs.String("serve-role", "", "mock, or gateway (split placement's in-process or bare gateway, hold mode); "+
		"body, config or key print the shipped binary's request, configuration (-mock) or key (scripts/cachegrind.sh)")
	events := fs.Int("events", 20, "content chunks per streamed response")
	delay := fs.Duration("event-delay", 0, "delay before each event of a streamed response")
	logMode := fs.String("log", "async", "gateway access log: async or discard")
	mockAddr := fs.String("mock", "", "roles gateway and config: the mock upstream's address")
	mockServer := fs.String("mock-server", "fasthttp", "role mock: its server, fasthttp or nethttp")
	bare := fs.Bool("bare", false, "the bare pass-through in the gateway's place")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch *role {
	case "gateway":
		return gatewayMain(*mockAddr, *logMode, *bare)
	case "body", "config", "key":
		fmt.Print(shippedParts(*role, *mockAddr))
		return 0
	case "mock":
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown -serve-role %q\n", *role)
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	m, err := startMock(*mockServer, *events, *delay, upstreamKey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench mock:", err)
		return 1
	}
	defer m.close()
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end will do
		close(eof)
	}()
	fmt.Printf("ready mock=%s\n", m.addr)
	select {
	case <-eof:
	case <-sigs:
	}
	return 0
}

// splitEnv is what split placement started, and how to undo it.
type splitEnv struct {
	srvCPU, loadCPU int

	mock *proc
	// list is the contenders in the order of the rounds and the tables:
	// direct, nginx (listed without -nginx too: it does not run, and its
	// columns show —), the gateway (the shipped binary, the in-process
	// gateway's or the bare pass-through's process), then with -floor bare
	// and with -baseline the baseline binary.
	list         []*contender
	shipped      *shipped  // the shipped binary's files; nil with -gateway inprocess or -bare
	baseline     *baseline // -baseline: the baseline binary's revision and files; nil without
	wrk          *wrkRunner
	nginxVersion string
	nginxNote    string // why -nginx runs lack nginx, when they do

	proof []string // where each process runs, checked at the start

	cleanups
}

// cleanups runs clean-up functions once, the last added first. A run holds
// the lock until it is done, so that a signal arriving during a normal
// clean-up exits only after it.
type cleanups struct {
	mu  sync.Mutex
	fns []func()
}

func (c *cleanups) add(f func()) {
	c.mu.Lock()
	c.fns = append(c.fns, f)
	c.mu.Unlock()
}

func (c *cleanups) run() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
	c.fns = nil
}

func (s *splitEnv) close() { s.run() }

// contender returns the contender named name, nil when it is not listed.
func (s *splitEnv) contender(name string) *contender {
	for _, c := range s.list {
		if c.name == name {
			return c
		}
	}
	return nil
}

// proc is a child process.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.Closer // closing it asks the bench's own children to exit; nil for nginx and rosetta
	done  chan struct{}
	err   error // how it ended, once done is closed
	// termWait is how long stop waits after SIGTERM before SIGKILL;
	// 0 for 3 s.
	termWait time.Duration
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startProc starts cmd pinned to cpu (not pinned for cpu < 0), in a
// process group of its own.
func startProc(name string, cmd *exec.Cmd, cpu int) (*proc, error) {
	prepareCmd(cmd)
	start := cmd.Start
	if cpu >= 0 {
		start = func() error { return startPinned(cmd, cpu) }
	}
	if err := start(); err != nil {
		return nil, fmt.Errorf("cannot start the %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process and its group: standard input closed, then
// SIGTERM, then SIGKILL, a few seconds apart.
func (p *proc) stop() {
	wait := func(d time.Duration) bool {
		select {
		case <-p.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	if p.stdin != nil {
		p.stdin.Close() //nolint:errcheck
		if wait(3 * time.Second) {
			return
		}
	}
	if p.exited() {
		return
	}
	signalGroup(p.pid(), syscall.SIGTERM) //nolint:errcheck // nginx: master and workers
	tw := p.termWait
	if tw <= 0 {
		tw = 3 * time.Second
	}
	if !wait(tw) {
		fmt.Fprintf(os.Stderr, "bench: the %s (pid %d) ignored SIGTERM; killing its process group\n", p.name, p.pid())
		signalGroup(p.pid(), syscall.SIGKILL) //nolint:errcheck
		wait(3 * time.Second)
	}
}

// startSplit starts split placement: the mock, the gateway, nginx if asked
// for, wrk's files with -load wrk, and pins this process. On error
// everything started is stopped.
func startSplit(o options, progress io.Writer) (e *env, err error) {
	cpus, err := allowedCPUs()
	if err != nil {
		return nil, err
	}
	if len(cpus) < 2 {
		return nil, fmt.Errorf("-placement split needs two CPUs; this process may run on CPU %v only", cpus)
	}
	s := &splitEnv{srvCPU: cpus[0], loadCPU: cpus[1]}
	e = &env{split: s}
	direct := &contender{name: "direct", label: "direct", abbr: "d", asDirect: true, about: "the mock itself, no proxy"}
	ngx := &contender{name: "nginx", label: "nginx", abbr: "n", asDirect: true, about: "no -nginx"}
	gw := &contender{name: "gateway", label: gwLabel(o), abbr: "g", about: gwAbout(o)}
	s.list = []*contender{direct, ngx, gw}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	s.catchSignals()

	nginxBin := ""
	if o.nginx {
		if nginxBin = findNginx(); nginxBin == "" {
			msg := "-nginx: no nginx binary on PATH or at /usr/sbin/nginx; install it (Debian: apt-get install -y nginx-light)"
			if os.Getenv("CI") == "true" {
				return nil, errors.New(msg)
			}
			s.nginxNote = msg + ". This run has NO nginx contender: the nginx columns are empty."
			ngx.about = "no nginx binary found"
			fmt.Fprintf(progress, "\n!!!!!!!!\n!!! %s\n!!!!!!!!\n\n", s.nginxNote)
		}
	}

	if o.load == "wrk" {
		if s.wrk, err = newWrkRunner(s.loadCPU); err != nil {
			return nil, err
		}
		s.add(s.wrk.close)
	}
	// The binaries are built before anything is pinned: the builds have
	// both CPUs. The baseline's first: a revision that names no commit
	// fails at once.
	if o.baseline != "" {
		if s.baseline, err = s.buildBaseline(o.baseline, progress); err != nil {
			return nil, err
		}
	}
	var sh *shipped
	if o.gateway == "shipped" && !o.bare {
		if sh, err = s.buildShipped(progress); err != nil {
			return nil, err
		}
		sh.profile = o.cpuprofile
	}

	if e.mockAddr, err = s.startMock(o); err != nil {
		return nil, err
	}
	direct.addr = e.mockAddr
	if sh != nil {
		gw.about += " (" + sh.tree + ")"
		e.gwAddr, err = s.startShipped(sh, e.mockAddr, &gw.proc)
	} else {
		e.gwAddr, err = s.startBenchGateway(o, e.mockAddr, &gw.proc)
	}
	if err != nil {
		return nil, err
	}
	gw.addr = e.gwAddr
	if nginxBin != "" {
		if err = s.startNginx(ngx, nginxBin, e.mockAddr); err != nil {
			return nil, err
		}
	}
	if o.floor {
		bare := &contender{name: "bare", label: "bare", abbr: "f",
			about: "-floor: the bare fasthttp pass-through (bench/bare.go), the floor of the design, in a process of its own"}
		s.list = append(s.list, bare)
		if bare.addr, err = s.startBare(e.mockAddr, &bare.proc); err != nil {
			return nil, err
		}
	}
	if bl := s.baseline; bl != nil {
		c := &contender{name: "baseline", label: bl.label(), abbr: "b",
			about: fmt.Sprintf("-baseline %s: the shipped binary built from commit %s, in a directory of its own", bl.rev, bl.short)}
		s.list = append(s.list, c)
		if c.addr, err = s.startShipped(bl.sh, e.mockAddr, &c.proc); err != nil {
			return nil, err
		}
	}

	// Last, this process: after the starts, whose narrowed thread may have
	// created a thread of this process on the servers' CPU.
	prev := runtime.GOMAXPROCS(1)
	restore, err := pinSelf(s.loadCPU)
	if err != nil {
		runtime.GOMAXPROCS(prev)
		return nil, fmt.Errorf("cannot pin the load generator to CPU %d: %w", s.loadCPU, err)
	}
	s.add(func() {
		if err := restore(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: restoring this process's CPU mask:", err)
		}
		runtime.GOMAXPROCS(prev)
	})
	proof, err := checkPinned("load generator (this process, GOMAXPROCS=1)", os.Getpid(), s.loadCPU)
	if err != nil {
		return nil, err
	}
	s.proof = append(s.proof, proof)
	return e, nil
}

// catchSignals stops everything on SIGINT, SIGTERM or SIGHUP, and exits.
func (s *splitEnv) catchSignals() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	stop := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "\nbench: %v: stopping the mock and the contenders, removing their directories\n", sig)
			s.close()
			os.Exit(1)
		case <-stop:
		}
	}()
	s.add(func() { // added first, so run last
		signal.Stop(sigs)
		close(stop)
	})
}

// startSelf starts this program again in a server role, pinned to the
// servers' CPU with GOMAXPROCS=1, and returns it with the first line it
// writes on its standard output (its "ready ..." line).
func (s *splitEnv) startSelf(name string, args ...string) (*proc, string, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1") // the last of duplicate keys wins
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	p, err := startProc(name, cmd, s.srvCPU)
	if err != nil {
		return nil, "", err
	}
	p.stdin = stdin
	s.add(p.stop)

	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		io.Copy(io.Discard, r) //nolint:errcheck // until it exits
	}()
	select {
	case line := <-lines:
		return p, line, nil
	case <-p.done:
		return nil, "", fmt.Errorf("the %s exited before it was ready: %v", name, p.err)
	case <-time.After(20 * time.Second):
		return nil, "", fmt.Errorf("the %s did not report ready within 20s", name)
	}
}

// readyAddr returns the address named key in a "ready key=ADDR" line.
func readyAddr(name, line, key string) (string, error) {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok && strings.HasPrefix(line, "ready ") {
			return v, nil
		}
	}
	return "", fmt.Errorf("the %s reported %q, want \"ready %s=ADDR\"", name, line, key)
}

// startMock starts the mock upstream's process and returns its address.
func (s *splitEnv) startMock(o options) (string, error) {
	name := "mock process (" + o.mock + ", GOMAXPROCS=1)"
	return s.startPinned(name, "mock", &s.mock, serveRoleFlag+"mock", "-mock-server="+o.mock, "-events="+strconv.Itoa(o.events),
		"-event-delay="+o.eventDelay.String())
}

// startBenchGateway starts the bench binary as the gateway's process: the
// in-process gateway (the proxy package, no store) or with -bare the bare
// pass-through, in front of the mock at mockAddr; it keeps the process in
// *into and returns its address.
func (s *splitEnv) startBenchGateway(o options, mockAddr string, into **proc) (string, error) {
	name := "in-process gateway's process (bench binary, proxy package, no store; GOMAXPROCS=1)"
	if o.bare {
		name = "bare pass-through's process (GOMAXPROCS=1)"
	}
	return s.startPinned(name, "gateway", into, serveRoleFlag+"gateway", "-mock="+mockAddr, "-log="+o.log,
		"-bare="+strconv.FormatBool(o.bare))
}

// startBare starts -floor's bare pass-through, the process -bare starts in
// the gateway's place, beside the gateway in front of the mock at
// mockAddr; it keeps the process in *into and returns its address.
func (s *splitEnv) startBare(mockAddr string, into **proc) (string, error) {
	return s.startPinned("bare pass-through's process (-floor, beside the gateway; GOMAXPROCS=1)", "gateway", into,
		serveRoleFlag+"gateway", "-mock="+mockAddr, "-bare=true")
}

// startPinned starts the bench binary in a server role, keeps its process
// in *into, checks that it runs pinned with the servers, and returns the
// address it says it is ready at.
func (s *splitEnv) startPinned(name, role string, into **proc, args ...string) (string, error) {
	p, line, err := s.startSelf(name, args...)
	if err != nil {
		return "", err
	}
	*into = p
	addr, err := readyAddr(name, line, role)
	if err != nil {
		return "", err
	}
	proof, err := checkPinned(name, p.pid(), s.srvCPU)
	if err != nil {
		return "", err
	}
	s.proof = append(s.proof, proof)
	return addr, nil
}

// checkPinned checks that every thread of a process may run on cpu only,
// and describes it for the report.
func checkPinned(name string, pid, cpu int) (string, error) {
	lists, n, err := threadCPUs(pid)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if len(lists) != 1 || lists[0] != strconv.Itoa(cpu) {
		return "", fmt.Errorf("%s (pid %d) is not pinned to CPU %d: its %d threads may run on %v", name, pid, cpu, n, lists)
	}
	return fmt.Sprintf("%s, pid %d: all %d threads Cpus_allowed_list=%d", name, pid, n, cpu), nil
}

// findNginx returns the path of an nginx binary, or "".
func findNginx() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

var nginxVersionRE = regexp.MustCompile(`nginx/(\d+)\.(\d+)\.(\d+)`)

// startNginx starts nginx pinned to the servers' CPU as a plain reverse
// proxy in front of the mock, as the contender c: its address, its master
// and its workers.
func (s *splitEnv) startNginx(c *contender, bin, mockAddr string) error {
	info, err := exec.Command(bin, "-V").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -V: %w: %s", bin, err, info)
	}
	m := nginxVersionRE.FindSubmatch(info)
	if m == nil {
		return fmt.Errorf("%s -V: no version in %q", bin, info)
	}
	s.nginxVersion = fmt.Sprintf("%s.%s.%s", m[1], m[2], m[3])
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	patch, _ := strconv.Atoi(string(m[3]))

	removeStaleDirs(nginxDirPrefix, "nginx.pid")
	dir, err := os.MkdirTemp("", nginxDirPrefix)
	if err != nil {
		return err
	}
	s.add(func() { os.RemoveAll(dir) }) //nolint:errcheck
	// Workers may run as another user (nginx's "user", when started as root).
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, mockAddr, addr, string(info))), 0o644); err != nil {
		return err
	}
	errLog, stderrLog := filepath.Join(dir, "error.log"), filepath.Join(dir, "stderr.log")
	args := []string{"-p", dir + "/", "-c", conf}
	if major > 1 || minor > 19 || (minor == 19 && patch >= 5) { // -e came with 1.19.5
		args = append(args, "-e", errLog) // not the compiled-in log, which may be unwritable
	}
	stderr, err := os.Create(stderrLog)
	if err != nil {
		return err
	}
	defer stderr.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	p, err := startProc("nginx", cmd, s.srvCPU)
	if err != nil {
		return err
	}
	c.proc = p
	s.add(p.stop)

	logs := func() string {
		var b strings.Builder
		for _, f := range []string{stderrLog, errLog} {
			if x, err := os.ReadFile(f); err == nil && len(x) > 0 {
				fmt.Fprintf(&b, "\n%s:\n%s", filepath.Base(f), tail(x, 2000))
			}
		}
		return b.String()
	}
	// Ready when it accepts connections and its worker is there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p.exited() {
			return fmt.Errorf("nginx exited at start (%v); its configuration is %s%s", p.err, conf, logs())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nginx did not start listening on %s within 10s%s", addr, logs())
		}
		if c.pids = childPids(p.pid()); len(c.pids) > 0 {
			if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	proof, err := checkPinned("nginx "+s.nginxVersion+" master", p.pid(), s.srvCPU)
	if err != nil {
		return err
	}
	s.proof = append(s.proof, proof)
	for _, w := range c.pids {
		proof, err := checkPinned("nginx worker", w, s.srvCPU)
		if err != nil {
			return err
		}
		s.proof = append(s.proof, proof)
	}
	c.addr = addr
	c.about = fmt.Sprintf("nginx %s as a plain reverse proxy, its master and %d worker(s)", s.nginxVersion, len(c.pids))
	return nil
}

const nginxDirPrefix = "rosetta-bench-nginx-"

// removeStaleDirs removes the temporary directories (named prefix*) of
// earlier runs that could not clean up (killed with SIGKILL): older than
// ten minutes, and the process their pid file names is gone. It returns
// how many it removed.
func removeStaleDirs(prefix, pidFile string) (removed int) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, pidFile)); err == nil {
			if _, err := os.Stat("/proc/" + strings.TrimSpace(string(b))); err == nil {
				continue // still running
			}
		}
		if os.RemoveAll(d) == nil {
			removed++
		}
	}
	return removed
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// freeLoopbackAddr returns a loopback address no one listens on now.
func freeLoopbackAddr() (string, error) {
	ln, err := listenLoopback()
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// nginxConf is nginx as a plain reverse proxy: one worker, keep-alive
// connections to the mock, responses relayed as they come (SSE events
// included), no access log; every path in dir. info is `nginx -V`'s output:
// the temporary paths of modules it was built without must not be named.
func nginxConf(dir, mockAddr, listen, info string) string {
	var temps strings.Builder
	for _, t := range []struct{ directive, module string }{
		{"client_body_temp_path", ""},
		{"proxy_temp_path", ""},
		{"fastcgi_temp_path", "fastcgi"},
		{"uwsgi_temp_path", "uwsgi"},
		{"scgi_temp_path", "scgi"},
	} {
		if t.module != "" && strings.Contains(info, "--without-http_"+t.module+"_module") {
			continue
		}
		fmt.Fprintf(&temps, "    %s %s;\n", t.directive, filepath.Join(dir, strings.TrimSuffix(t.directive, "_temp_path")))
	}
	return fmt.Sprintf(`# Generated by Rosetta's load harness (bench/split.go): nginx as a plain
# reverse proxy in front of the mock upstream.
daemon off;
master_process on;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;

events {
    worker_connections 4096;
}

http {
    access_log off;
%[4]s
    # The harness's clients keep their connections for a whole run.
    keepalive_requests 1000000;
    keepalive_timeout 75s;

    upstream mock {
        server %[2]s;
        keepalive 256;
        keepalive_requests 1000000;
        keepalive_timeout 60s;
    }

    server {
        listen %[3]s;
        location / {
            proxy_pass http://mock;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off; # relay SSE events as they come
        }
    }
}
`, dir, mockAddr, listen, temps.String())
}

// procTimes is the CPU time and the run-queue wait of processes.
type procTimes struct{ cpu, wait time.Duration }

func (a procTimes) sub(b procTimes) procTimes { return procTimes{a.cpu - b.cpu, a.wait - b.wait} }

// coreTimes is a CPU's time from /proc/stat: all of it, idle (iowait
// included), interrupts (hard and soft: on loopback, much of the network
// stack) and steal (taken by the hypervisor).
type coreTimes struct{ total, idle, irq, steal time.Duration }

func (a coreTimes) sub(b coreTimes) coreTimes {
	return coreTimes{a.total - b.total, a.idle - b.idle, a.irq - b.irq, a.steal - b.steal}
}

// share is d as a share of the core's time.
func (a coreTimes) share(d time.Duration) float64 {
	if a.total <= 0 {
		return 0
	}
	return float64(d) / float64(a.total)
}

// others is the share of the core that processes other than ours used
// (busy, less interrupts, steal and ours).
func (a coreTimes) others(ours time.Duration) float64 {
	return max(0, a.share(a.total-a.idle-a.irq-a.steal-ours))
}

// splitSample is what split placement reads of the other processes and the
// two cores, at the start and at the end of a run's window.
type splitSample struct {
	mock              procTimes
	own               map[string]procTimes // each proxy's processes, by contender name, the idle ones' too
	srvCore, loadCore coreTimes
}

func (a splitSample) sub(b splitSample) splitSample {
	d := splitSample{mock: a.mock.sub(b.mock), own: make(map[string]procTimes, len(a.own)),
		srvCore: a.srvCore.sub(b.srvCore), loadCore: a.loadCore.sub(b.loadCore)}
	for name, t := range a.own {
		d.own[name] = t.sub(b.own[name])
	}
	return d
}

// ours is the time of all the servers' processes: the mock and every
// proxy, the one loaded and the idle ones.
func (a splitSample) ours() procTimes {
	t := a.mock
	for _, x := range a.own {
		t.cpu, t.wait = t.cpu+x.cpu, t.wait+x.wait
	}
	return t
}

func (s *splitEnv) sample() splitSample {
	x := splitSample{mock: procTimesOf([]int{s.mock.pid()}), own: make(map[string]procTimes, len(s.list)),
		srvCore: coreTimesOf(s.srvCPU), loadCore: coreTimesOf(s.loadCPU)}
	for _, c := range s.list {
		if c.proc != nil {
			x.own[c.name] = procTimesOf(append([]int{c.proc.pid()}, c.pids...))
		}
	}
	return x
}

// splitStats is one run's split placement figures.
type splitStats struct {
	mockCPU    time.Duration // CPU per request of the mock, its own process
	ownCPU     time.Duration // of the run's proxy, its own processes (nginx: master and workers); 0 in direct runs
	srvUse     float64       // share of the servers' CPU our processes used
	srvWait    float64       // their run-queue wait, per window
	srvIRQ     float64       // share of the servers' CPU in interrupts
	loadIRQ    float64
	srvOthers  float64 // share of each CPU other processes used
	loadOthers float64
	srvSteal   float64 // share of each CPU the hypervisor took
	loadSteal  float64
}

func splitStatsOf(r *result) splitStats {
	x := r.split
	if x == nil {
		return splitStats{}
	}
	var st splitStats
	if r.requests > 0 {
		n := time.Duration(r.requests)
		st.mockCPU, st.ownCPU = x.mock.cpu/n, x.own[r.target].cpu/n
	}
	all := x.ours()
	ours := all.cpu
	st.srvUse = x.srvCore.share(ours)
	st.srvWait = float64(all.wait) / float64(r.window)
	st.srvIRQ, st.loadIRQ = x.srvCore.share(x.srvCore.irq), x.loadCore.share(x.loadCore.irq)
	st.srvOthers, st.loadOthers = x.srvCore.others(ours), x.loadCore.others(r.cpu)
	st.srvSteal, st.loadSteal = x.srvCore.share(x.srvCore.steal), x.loadCore.share(x.loadCore.steal)
	return st
}

// fmtLat formats a latency of the tables, "—" for one not measured (< 0).
func fmtLat(d time.Duration) string {
	if d < 0 {
		return "—"
	}
	return fmtDur(d)
}

// progressLine describes one run of split placement.
func (s *splitEnv) progressLine(r *result) string {
	st := splitStatsOf(r)
	line := fmt.Sprintf("%-8s %8.0f req/s  p50 %-7s p99 %-7s p99.9 %-7s max %-7s  CPU%d: mock %5.1fµs/req",
		r.target, r.reqPerSec(), fmtLat(r.pct(0.5)), fmtLat(r.pct(0.99)),
		fmtLat(r.pct(0.999)), fmtLat(r.pct(1)), s.srvCPU, us(st.mockCPU))
	if c := s.contender(r.target); c != nil && c.proc != nil {
		line += fmt.Sprintf(" %s %5.1fµs/req", c.label, us(st.ownCPU))
	}
	wait := fmt.Sprintf("%3.0f%%", 100*r.waitShare())
	if r.wrk != nil {
		wait = "  —"
	}
	line += fmt.Sprintf(", %3.0f%% ours %3.0f%% irq %3.0f%% others, wait %3.0f%%; CPU%d: load %5.1fµs/req, %3.0f%% ours %3.0f%% irq %3.0f%% others, wait %s%s",
		100*st.srvUse, 100*st.srvIRQ, 100*st.srvOthers, 100*st.srvWait, s.loadCPU,
		us(r.cpuPerReq()), 100*r.cpuUse(), 100*st.loadIRQ, 100*st.loadOthers, wait, failNote(r))
	return line
}
