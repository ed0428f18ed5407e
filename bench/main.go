// Command bench is Rosetta's load harness: it measures what the gateway's
// pass-through path costs, against a direct run in the same process and the
// same run.
//
// A mock upstream (an OpenAI look-alike on fasthttp, or with -mock nethttp
// on net/http, as issue 11's own measurement had it) and a gateway in front
// of it run in this process; for each concurrency and mode (non-streamed and
// streamed chat completions) the load generator runs against the mock
// directly and through the gateway, back to back, in interleaved rounds, and
// prints a markdown table of the medians: throughput, latency, and the
// process's CPU time and read/write system calls per request, with its
// run-queue wait, which tells a busy machine from a slow gateway.
//
// In this shared placement the gateway is the in-process one: the proxy
// package inside the bench binary, without a store or usage rows, its log
// sent to io.Discard; the report says so.
//
// With -placement split (Linux, two CPUs) it measures what ships, in the
// placement of DESIGN.md §5: the `rosetta serve` binary built from the tree
// (shipped.go) with a user's configuration (the default SQLite store, usage
// rows, the JSON access log to a file), the mock and, with -nginx, an nginx
// reverse proxy in front of the same mock, each a process of its own pinned
// to one CPU; the load comes from this process (or with -load wrk from
// wrk) pinned to the other, and the request is a chat conversation of
// about 3 KB (-body long). Two more contenders can run beside the shipped
// binary, in the same rounds: -floor, the bare fasthttp pass-through
// (bare.go), whose CPU per request the gateway's is divided by, and
// -baseline REV, the shipped binary built from git revision REV
// (baseline.go), for before and after figures from one run. See split.go.
//
//	go run ./bench                       # -c 16,64,256 -d 5s -rounds 3
//	go run ./bench -quick                # c=16, 1s, 1 round: a smoke test
//	go run ./bench -modes stream -c 64 -cpuprofile gw.pprof
//	go run ./bench -placement split -nginx -c 64   # DESIGN.md §5's comparison, the shipped binary
//	go run ./bench -placement split -nginx -load wrk -c 64   # the same, wrk as the load generator
//	go run ./bench -placement split -nginx -floor -mock nethttp -load wrk -c 64   # issue 11's setup: a net/http mock
//	go run ./bench -placement split -gateway inprocess -c 64 # the in-process gateway in its own process
//	go run ./bench -hold 2000 -hold-for 2m         # RSS per open stream (hold.go)
//	go run ./bench -bare -c 64                     # the bare fasthttp floor in the gateway's place (bare.go)
//	go run ./bench -placement split -nginx -c 16 -rate 2000  # open loop: the p50 latency a proxy adds
//	go run ./bench -placement split -floor -c 64             # rosetta's CPU per request ÷ the bare floor's, same run
//	go run ./bench -placement split -baseline HEAD~3 -c 64   # before (HEAD~3) and after (the tree), same run
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
	"github.com/rosetta-gateway/rosetta/proxy"
)

// options are the harness's flags.
type options struct {
	conns      []int
	dur        time.Duration
	warmup     time.Duration
	rounds     int
	events     int
	eventDelay time.Duration
	modes      []string // "nonstream", "stream", "embeddings"
	mapped     bool     // clients ask for a public alias the gateway maps
	log        string   // the gateway's access log: "async" or "discard"
	cpuprofile string
	only       string // a contender's name (direct, nginx, gateway, bare, baseline) to run it only (for profiling); "" for all
	placement  string // "shared" (one process) or "split" (servers and load generator on CPUs of their own)
	nginx      bool   // split placement: nginx as a contender
	// floor: split placement: the bare pass-through (bare.go) as a
	// contender beside the gateway, named "bare", in a process of its own.
	floor bool
	// baseline: split placement: a git revision; the shipped binary built
	// from it (baseline.go) is a contender beside the one built from the
	// tree, named "baseline". "" for none.
	baseline string
	hold     holdOptions
	bare     bool // a bare fasthttp pass-through in the gateway's place (bare.go)
	// anthropic: the gateway's clients speak Anthropic's Messages API, so
	// every request and stream is translated to and from the OpenAI mock.
	anthropic bool
	rate      float64 // open loop: requests per second per run (runSpec.rate); 0 for closed loop
	// gateway is what serves as the gateway: "shipped" (the rosetta binary
	// built from this tree, in a process of its own: split placement's
	// default) or "inprocess" (the proxy package inside the bench binary,
	// without store or usage rows: shared placement's only kind). -bare
	// puts the bare pass-through in its place either way.
	gateway string
	load    string       // "builtin" (the fasthttp load generator in this process) or "wrk"
	mock    string       // the mock upstream's server: "fasthttp" or "nethttp" (mockServers)
	conv    conversation // the request's conversation (-body)
}

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], serveRoleFlag) {
		os.Exit(serveMain(os.Args[1:])) // the servers process of -placement split
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	run := run
	if o.hold.streams > 0 {
		run = func(o options, out, progress io.Writer) (bool, error) { return runHold(o, o.hold, out, progress) }
	}
	ok, err := run(o, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	conns := fs.String("c", "16,64,256", "concurrent connections, comma-separated")
	dur := fs.Duration("d", 5*time.Second, "measured duration of each run")
	warmup := fs.Duration("warmup", 500*time.Millisecond, "unmeasured warm-up before each run")
	rounds := fs.Int("rounds", 3, "rounds of direct and gateway runs, interleaved; the table shows medians")
	events := fs.Int("events", 20, "content chunks per streamed response")
	eventDelay := fs.Duration("event-delay", 0, "delay before each event of a streamed response")
	modes := fs.String("modes", "nonstream,stream", "modes to run: nonstream, stream, embeddings (the embeddings of one text, "+
		"text-embedding-3-small's 1536 floats, about 20 KB)")
	mapped := fs.Bool("mapped", false, "clients ask for the alias "+mappedPublic+", which the gateway maps to "+
		mappedUpstream+" (the model name is rewritten in every response and event)")
	logMode := fs.String("log", "async", "the in-process gateway's access log: async (JSON through asynclog to io.Discard) or discard "+
		"(the shipped binary's is its own: JSON through its async writer to a file)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole process to this file; "+
		"with -placement split and the shipped gateway, of the shipped binary (rosetta serve -cpuprofile) instead")
	only := fs.String("only", "", "run only direct, nginx, gateway, bare (-floor) or baseline (-baseline) runs (to profile one side; the table then lacks the others)")
	placement := fs.String("placement", "shared", "shared: load generator, mock and in-process gateway in this process on all cores; "+
		"split: mock and gateway (the shipped binary) in processes of their own pinned to one CPU, the load generator pinned to another (DESIGN.md §5; Linux, 2 CPUs)")
	nginx := fs.Bool("nginx", false, "with -placement split: nginx as a plain reverse proxy in front of the same mock, pinned with the servers, "+
		"as a third contender (Debian: apt-get install -y nginx-light)")
	hold := fs.Int("hold", 0, "hold mode: open this many slow streams through a gateway child process and report its RSS "+
		"per stream and open fds over -hold-for, instead of the load runs (Linux)")
	holdFor := fs.Duration("hold-for", time.Minute, "hold mode: how long the streams are held")
	holdEvery := fs.Duration("hold-every", 2*time.Second, "hold mode: time between the upstream's events")
	holdSample := fs.Duration("hold-sample", 5*time.Second, "hold mode: time between RSS samples")
	holdGOGC := fs.String("hold-gogc", "", "hold mode: GOGC of the gateway process (default: inherited)")
	holdHeap := fs.String("hold-heap", "", "hold mode: the gateway process writes its heap profile to this file "+
		"in the forced collection that ends the hold, streams still open (go tool pprof -sample_index=inuse_space)")
	bare := fs.Bool("bare", false, "run a bare fasthttp pass-through (auth by key hash, sonic.Get of model and stream, "+
		"one upstream client) in the gateway's place: the floor of the design, to divide the gateway's figures by")
	client := fs.String("client", "openai", "the gateway clients' style: openai (pass-through to the OpenAI mock) or "+
		"anthropic (every request and stream translated): run both to compare translation with pass-through")
	rate := fs.Float64("rate", 0, "open loop: each run sends this many requests per second in all, spread over its "+
		"connections, instead of back to back; at a rate the servers carry, latencies are service times, not queueing "+
		"(DESIGN.md §5's added p50 latency at 16 concurrent: -c 16 -rate 2000)")
	gateway := fs.String("gateway", "", "what serves as the gateway: shipped (the `rosetta serve` binary built from this tree "+
		"with a user's configuration: SQLite store, usage rows, access log; split placement only, its default) or inprocess "+
		"(the proxy package inside the bench binary, no store, no usage rows; the only kind in shared placement)")
	loadGen := fs.String("load", "builtin", "split placement's load generator: builtin (fasthttp, in this process) or wrk "+
		"(Debian's wrk, -t 1 with a Lua script for the POST; apt-get install -y wrk)")
	body := fs.String("body", "", "the request: long (a system prompt and seven turns, about 3 KB; split placement's default) "+
		"or short (three turns, about 1 KB; shared placement's default)")
	floor := fs.Bool("floor", false, "with -placement split: the bare fasthttp pass-through (the -bare process, bench/bare.go) as a contender "+
		"beside the gateway, pinned with the servers and rotated with the others; the tables divide the gateway's req/s and CPU per request by the floor's "+
		"(issue 11's budget: CPU ≤ 1.25× the floor's)")
	baseline := fs.String("baseline", "", "with -placement split: a git revision (HEAD~3, a tag, a commit); the shipped binary built from it "+
		"(git worktree in a temporary directory, go build ./cmd/rosetta) runs beside the one built from the tree as the contender rosetta@<short rev>, "+
		"with the same kind of configuration in its own directory; the tables divide the tree's req/s and CPU per request by the baseline's: before and after, one run")
	mockServer := fs.String("mock", "fasthttp", "the mock upstream's server: fasthttp, or nethttp (net/http's, as issue 11's own "+
		"measurement had; same answers, one chunk per SSE event; it costs the servers' CPU more per request)")
	quick := fs.Bool("quick", false, "smoke test: -c 16 -d 1s -rounds 1 -warmup 200ms")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	o := options{dur: *dur, warmup: *warmup, rounds: *rounds, events: *events, eventDelay: *eventDelay,
		mapped: *mapped, log: *logMode, cpuprofile: *cpuprofile, only: *only, placement: *placement, nginx: *nginx,
		bare: *bare, anthropic: *client == "anthropic", rate: *rate, hold: holdOptions{streams: *hold, holdFor: *holdFor, every: *holdEvery, sample: *holdSample, gogc: *holdGOGC, bare: *bare, heap: *holdHeap}}
	o.gateway, o.load, o.mock, o.hold.mock = *gateway, *loadGen, *mockServer, *mockServer
	o.floor, o.baseline = *floor, strings.TrimSpace(*baseline)
	switch o.gateway {
	case "":
		o.gateway = "inprocess"
		if o.placement == "split" {
			o.gateway = "shipped"
		}
	case "shipped", "inprocess":
	default:
		return o, fmt.Errorf("-gateway: unknown %q (want shipped or inprocess)", o.gateway)
	}
	switch *body {
	case "":
		o.conv = shortConv
		if o.placement == "split" {
			o.conv = longConv
		}
	case "long":
		o.conv = longConv
	case "short":
		o.conv = shortConv
	default:
		return o, fmt.Errorf("-body: unknown %q (want long or short)", *body)
	}
	if *client != "openai" && *client != "anthropic" {
		return o, fmt.Errorf("-client: unknown style %q (want openai or anthropic)", *client)
	}
	if o.anthropic && o.bare {
		return o, errors.New("-client anthropic: the bare pass-through does not translate")
	}
	for _, s := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-c: %q is not a positive number", s)
		}
		o.conns = append(o.conns, n)
	}
	for _, m := range strings.Split(*modes, ",") {
		switch m = strings.TrimSpace(m); m {
		case "nonstream", "stream", "embeddings":
			o.modes = append(o.modes, m)
		default:
			return o, fmt.Errorf("-modes: unknown mode %q (want nonstream, stream or embeddings)", m)
		}
	}
	if *quick {
		o.conns, o.dur, o.rounds, o.warmup = []int{16}, time.Second, 1, 200*time.Millisecond
	}
	embeddings := slices.Contains(o.modes, "embeddings")
	switch {
	case embeddings && (o.anthropic || o.bare || o.floor):
		return o, errors.New("-modes embeddings: OpenAI's embeddings, relayed by the gateway: it takes no -client anthropic, -bare or -floor " +
			"(the bare pass-through relays chat only)")
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	case o.dur <= 0:
		return o, errors.New("-d must be positive")
	case o.events < 0:
		return o, errors.New("-events must not be negative")
	case o.log != "async" && o.log != "discard":
		return o, fmt.Errorf("-log: unknown %q (want async or discard)", o.log)
	case o.only != "" && !slices.Contains(contenderNames, o.only):
		return o, fmt.Errorf("-only: unknown %q (want one of %s)", o.only, strings.Join(contenderNames, ", "))
	case o.placement != "shared" && o.placement != "split":
		return o, fmt.Errorf("-placement: unknown %q (want shared or split)", o.placement)
	case o.nginx && o.placement != "split":
		return o, errors.New("-nginx needs -placement split (nginx is only compared in the placement of DESIGN.md §5)")
	case o.only == "nginx" && !o.nginx:
		return o, errors.New("-only nginx needs -nginx")
	case o.only == "bare" && !o.floor:
		return o, errors.New("-only bare needs -floor (with -bare, the bare pass-through is the gateway: -only gateway)")
	case o.only == "baseline" && o.baseline == "":
		return o, errors.New("-only baseline needs -baseline REV")
	case o.floor && o.placement != "split":
		return o, errors.New("-floor needs -placement split (each contender in a process of its own; in shared placement, -bare)")
	case o.floor && o.bare:
		return o, errors.New("-floor runs the bare pass-through beside the gateway, -bare in its place: choose one")
	case o.floor && o.mapped:
		return o, errors.New("-floor: the bare pass-through rewrites no model name: it takes no -mapped")
	case o.floor && o.anthropic:
		return o, errors.New("-floor: the bare pass-through does not translate: it takes no -client anthropic")
	case o.baseline != "" && o.placement != "split":
		return o, errors.New("-baseline needs -placement split (the binaries run as processes of their own)")
	case o.baseline != "" && (o.gateway != "shipped" || o.bare):
		return o, errors.New("-baseline compares two shipped binaries: it takes no -gateway inprocess or -bare")
	case strings.HasPrefix(o.baseline, "-"):
		return o, fmt.Errorf("-baseline: %q is not a git revision", o.baseline)
	case o.bare && o.mapped:
		return o, errors.New("-bare rewrites no model name: it takes no -mapped")
	case o.rate < 0:
		return o, errors.New("-rate must not be negative")
	case o.gateway == "shipped" && o.placement != "split":
		return o, errors.New("-gateway shipped needs -placement split (shared placement runs everything in this process)")
	case !slices.Contains(mockServers, o.mock):
		return o, fmt.Errorf("-mock: unknown %q (want %s)", o.mock, strings.Join(mockServers, " or "))
	case o.load != "builtin" && o.load != "wrk":
		return o, fmt.Errorf("-load: unknown %q (want builtin or wrk)", o.load)
	case o.load == "wrk" && o.placement != "split":
		return o, errors.New("-load wrk needs -placement split (wrk gets the load generator's CPU)")
	case o.load == "wrk" && o.rate > 0:
		return o, errors.New("-load wrk runs closed loop: it takes no -rate")
	case o.hold.streams < 0:
		return o, errors.New("-hold must not be negative")
	case o.hold.streams > 0 && (o.hold.holdFor <= 0 || o.hold.every <= 0 || o.hold.sample <= 0):
		return o, errors.New("-hold-for, -hold-every and -hold-sample must be positive")
	case o.hold.streams > 0 && o.placement != "shared":
		return o, errors.New("-hold runs the gateway in a process of its own: it takes no -placement")
	}
	return o, nil
}

// run sets up, runs every case, prints the report to out and progress to
// progress. It reports false when a run had errors.
func run(o options, out, progress io.Writer) (bool, error) {
	var e *env
	var err error
	if o.placement == "split" {
		e, err = startSplit(o, progress)
	} else {
		e, err = startEnv(o)
	}
	if err != nil {
		return false, err
	}
	defer e.close()
	if err := e.check(o); err != nil {
		return false, err
	}
	if o.cpuprofile != "" && (e.split == nil || e.split.shipped == nil) { // else the shipped binary profiles itself
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return false, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return false, err
		}
		defer pprof.StopCPUProfile()
	}
	rows := runAll(o, e, progress)
	printReportFor(out, o, e.split, rows)
	for _, r := range rows {
		if r.failed() {
			return false, nil
		}
	}
	return true, nil
}

// Model names and keys of the setup.
const (
	directModel    = "gpt-4o-mini"            // served under its own name
	mappedPublic   = "rosetta-fast"           // a public alias...
	mappedUpstream = "gpt-4o-mini-2024-07-18" // ...for this upstream name
	upstreamKey    = "sk-upstream-bench-0123456789abcdef"
	gatewayKey     = "sk-bench-0123456789abcdef"
)

// env is the mock upstream and the gateway in front of it, and in split
// placement the other contenders in front of the same mock.
type env struct {
	mockAddr, gwAddr string

	// Shared placement (and the servers process of split placement): the
	// servers run in this process.
	mock *mock
	gw   *proxy.Gateway
	bare *bareProxy // -bare: in the gateway's place
	sink *asynclog.Writer

	// Split placement: the processes this one started, and how to stop them.
	split *splitEnv
}

func startEnv(o options) (*env, error) {
	m, err := startMock(o.mock, o.events, o.eventDelay, upstreamKey)
	if err != nil {
		return nil, fmt.Errorf("cannot start the mock upstream: %w", err)
	}
	e, err := startGateway(o, m.addr)
	if err != nil {
		m.close()
		return nil, err
	}
	e.mock = m
	return e, nil
}

// startGateway starts a gateway in front of the mock upstream at mockAddr,
// configured as the binary configures it: the access log written by hand
// through an asynclog.Writer (to io.Discard), or discarded with -log
// discard.
func startGateway(o options, mockAddr string) (*env, error) {
	e := &env{mockAddr: mockAddr}
	if o.bare {
		var err error
		e.bare, e.gwAddr, err = startBare(mockAddr)
		return e, err
	}
	yaml := fmt.Sprintf(`
server:
  listen: 127.0.0.1:0
channels:
  - name: mock
    type: openai
    base_url: http://%s/v1
    api_keys: [%q]
    models: [%q]
    model_map: {%q: %q}
keys:
  - name: bench
    key: %q
    models: ["*"]
`, mockAddr, upstreamKey, directModel, mappedPublic, mappedUpstream, gatewayKey)
	cfg, err := config.Parse([]byte(yaml), "bench", nil)
	if err != nil {
		return nil, err
	}
	opts := proxy.Options{Log: slog.New(slog.DiscardHandler), AccessLog: io.Discard}
	if o.log == "async" {
		e.sink = asynclog.New(io.Discard, 100*time.Millisecond, 4<<20)
		opts.Log, opts.AccessLog = slog.New(slog.NewJSONHandler(e.sink, nil)), e.sink
	}
	if e.gw, err = proxy.New(cfg, opts); err != nil {
		e.close()
		return nil, err
	}
	ln, err := listenLoopback()
	if err != nil {
		e.close()
		return nil, err
	}
	e.gwAddr = ln.Addr().String()
	go e.gw.Serve(ln) //nolint:errcheck // ends with Shutdown
	return e, nil
}

func (e *env) close() {
	if e.split != nil {
		e.split.close()
		return
	}
	if e.bare != nil {
		e.bare.close()
	}
	if e.gw != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e.gw.Shutdown(ctx) //nolint:errcheck
		cancel()
	}
	if e.sink != nil {
		e.sink.Close() //nolint:errcheck
	}
	if e.mock != nil {
		e.mock.close()
	}
}

// targets returns the direct and the gateway target of a mode. The direct
// client sends what the gateway sends upstream (the upstream model name, and
// for streams stream_options.include_usage, which the gateway turns on to
// count tokens), so that the mock does the same work in both runs; the
// gateway client sends a plain request. A direct stream therefore has one
// event more: the usage chunk the gateway strips.
func (e *env) targets(o options, mode string) (direct, gateway target) {
	public, upstream := directModel, directModel
	if o.mapped {
		public, upstream = mappedPublic, mappedUpstream
	}
	if mode == "embeddings" {
		direct = target{name: "direct", addr: e.mockAddr, auth: upstreamKey, body: embeddingsBody(upstream), embeddings: true}
		gateway = target{name: "gateway", addr: e.gwAddr, auth: gatewayKey, body: embeddingsBody(public), embeddings: true}
		return direct, gateway
	}
	stream := mode == "stream"
	direct = target{name: "direct", addr: e.mockAddr, auth: upstreamKey,
		body: chatBodyOf(o.conv, upstream, stream, stream), stream: stream}
	gateway = target{name: "gateway", addr: e.gwAddr, auth: gatewayKey,
		body: chatBodyOf(o.conv, public, stream, false), stream: stream}
	if o.anthropic {
		gateway.body, gateway.anthropic = messagesBodyOf(o.conv, public, stream), true
	}
	return direct, gateway
}

// contenderNames are the contenders' names, in the order of the list, the
// rounds and the tables' columns.
var contenderNames = []string{"direct", "nginx", "gateway", "bare", "baseline"}

// contender is a server the load runs against, in turn with the others:
// the mock itself (direct), nginx, the gateway, the bare pass-through
// (-floor) or the baseline binary (-baseline). A row keeps the results of
// each by its name, and the reports have columns for each, in the list's
// order.
type contender struct {
	name  string // direct, nginx, gateway, bare or baseline: the results' target, -only's value
	label string // its name in the tables: direct, nginx, rosetta, in-process gw, bare, rosetta@<rev>
	abbr  string // its letter in the tables' "x / y / z" cells
	about string // what it is, for the report's list of contenders
	addr  string // "" when it does not run (no -nginx, or nginx missing): its columns show —
	// asDirect: its clients send the direct client's requests (the
	// upstream key and model, include_usage on streams), so that the mock
	// behind it does a direct run's work: direct and nginx. The others get
	// the gateway client's.
	asDirect bool
	// Split placement: its process, and further ones whose CPU is its own
	// too (nginx's workers); nil for direct, which has none.
	proc *proc
	pids []int
}

// isProxy says whether c stands between the client and the mock.
func (c *contender) isProxy() bool { return c.name != "direct" }

// list returns the contenders: in split placement those it set up, else
// direct and the in-process gateway.
func (e *env) list(o options) []*contender {
	if e.split != nil {
		return e.split.list
	}
	return []*contender{
		{name: "direct", label: "direct", abbr: "d", addr: e.mockAddr, asDirect: true},
		{name: "gateway", label: gwLabel(o), abbr: "g", addr: e.gwAddr},
	}
}

// ran says whether c runs in this harness run.
func (c *contender) ran(o options) bool { return c.addr != "" && (o.only == "" || o.only == c.name) }

// contenders returns the targets of a mode in their first round's order,
// the list's: direct, nginx, gateway, bare, baseline, those there are.
// nginx gets exactly the direct client's requests, so that the mock
// behind it does the direct run's work; bare and baseline the gateway
// client's.
func (e *env) contenders(o options, mode string) []target {
	direct, gateway := e.targets(o, mode)
	var ts []target
	for _, c := range e.list(o) {
		if c.addr == "" {
			continue
		}
		t := gateway
		if c.asDirect {
			t = direct
		}
		t.name, t.addr = c.name, c.addr
		ts = append(ts, t)
	}
	return ts
}

// check sends one request of each kind before the runs, so that a broken
// setup fails at once and says why.
func (e *env) check(o options) error {
	modes := append([]string{"nonstream", "stream"}, o.modes...)
	slices.Sort(modes)
	for _, mode := range slices.Compact(modes) {
		for _, t := range e.contenders(o, mode) {
			status, _, body, err := probe(t)
			if err == nil && status != 200 {
				err = fmt.Errorf("status %d: %.300s", status, body)
			}
			if err != nil {
				return fmt.Errorf("setup check failed, %s (%s): %w", t.name, mode, err)
			}
		}
	}
	return nil
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// row is one mode and concurrency: every round's run of each contender,
// by its name.
type row struct {
	mode  string
	conns int
	names []string // the contenders, in the list's order
	runs  map[string][]*result
}

func newRow(mode string, conns int, list []*contender) *row {
	r := &row{mode: mode, conns: conns, runs: map[string][]*result{}}
	for _, c := range list {
		r.names = append(r.names, c.name)
	}
	return r
}

func (r *row) add(res *result) {
	if !slices.Contains(r.names, res.target) {
		r.names = append(r.names, res.target)
	}
	r.runs[res.target] = append(r.runs[res.target], res)
}

// of returns the runs of the contender named name; none when it did not run.
func (r *row) of(name string) []*result { return r.runs[name] }

// all returns every run of the row, contender by contender.
func (r *row) all() []*result {
	var all []*result
	for _, name := range r.names {
		all = append(all, r.runs[name]...)
	}
	return all
}

func (r *row) failed() bool {
	for _, x := range r.all() {
		if x.failed() {
			return true
		}
	}
	return false
}

// summary is the medians over a row's rounds for one target.
type summary struct {
	rps            float64
	p50, p99, ttfb time.Duration
	cpu            time.Duration // process CPU per request
	cpuUse         float64       // share of the cores the process used
	wait           float64       // run-queue wait per core
	reads, writes  float64       // process read and write system calls per request
	events         int           // events in a sample stream
}

func summarize(rs []*result) summary {
	var rps, use, wait, reads, writes []float64
	var p50, p99, ttfb, cpu []time.Duration
	for _, r := range rs {
		rps = append(rps, r.reqPerSec())
		p50 = append(p50, r.pct(0.50))
		p99 = append(p99, r.pct(0.99))
		ttfb = append(ttfb, percentile(r.ttfb, 0.50))
		cpu = append(cpu, r.cpuPerReq())
		use = append(use, r.cpuUse())
		wait = append(wait, r.waitShare())
		rd, wr := r.callsPerReq()
		reads, writes = append(reads, rd), append(writes, wr)
	}
	s := summary{rps: median(rps), p50: medianDur(p50), p99: medianDur(p99), ttfb: medianDur(ttfb),
		cpu: medianDur(cpu), cpuUse: median(use), wait: median(wait), reads: median(reads), writes: median(writes)}
	if len(rs) > 0 {
		s.events = countEvents(rs[0].sample)
	}
	return s
}

// countEvents counts the SSE events of a stream body.
func countEvents(b []byte) int { return bytes.Count(b, []byte("\n\n")) }

// runAll runs every mode and concurrency, rounds interleaved: each round
// starts one contender later (direct, gateway; or direct, nginx, gateway,
// bare, baseline, those there are, rotated), so that no contender always
// runs on a warmer process.
func runAll(o options, e *env, progress io.Writer) []*row {
	var rows []*row
	for _, mode := range o.modes {
		ts := e.contenders(o, mode)
		for _, c := range o.conns {
			r := newRow(mode, c, e.list(o))
			for round := range o.rounds {
				k := round % len(ts)
				order := append(append([]target(nil), ts[k:]...), ts[:k]...)
				for _, t := range order {
					if o.only != "" && t.name != o.only {
						continue
					}
					spec := runSpec{conns: c, warmup: o.warmup, dur: o.dur, rate: o.rate}
					if e.split != nil {
						spec.sample = e.split.sample
					}
					var res *result
					if o.load == "wrk" {
						res = e.split.loadWrk(t, spec)
					} else {
						res = load(t, spec)
					}
					r.add(res)
					if e.split != nil {
						fmt.Fprintf(progress, "%-9s c=%-4d round %d/%d %s\n", mode, c, round+1, o.rounds, e.split.progressLine(res))
						continue
					}
					rd, wr := res.callsPerReq()
					fmt.Fprintf(progress, "%-9s c=%-4d round %d/%d %-7s %8.0f req/s  p50 %-7s p99 %-7s p99.9 %-7s max %-7s  cpu %5.1fµs/req, %3.0f%% of cores, %3.0f%% run-queue wait, r/w calls %.1f/%.1f per req%s\n",
						mode, c, round+1, o.rounds, t.name, res.reqPerSec(),
						fmtDur(percentile(res.lat, 0.5)), fmtDur(percentile(res.lat, 0.99)),
						fmtDur(percentile(res.lat, 0.999)), fmtDur(percentile(res.lat, 1)),
						us(res.cpuPerReq()), 100*res.cpuUse(), 100*res.waitShare(), rd, wr, failNote(res))
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// us is d in microseconds.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func failNote(r *result) string {
	if !r.failed() {
		return ""
	}
	return fmt.Sprintf("  !!! %d errors, %d non-200: %s", r.errors, r.non200, r.firstError)
}

func printReport(w io.Writer, o options, rows []*row) {
	printReportFor(w, o, nil, rows)
}

// printReportFor prints the report of rows; s is the split placement's
// setup, nil for shared placement.
func printReportFor(w io.Writer, o options, s *splitEnv, rows []*row) {
	if s != nil {
		printSplitReport(w, o, s, rows)
		return
	}
	model := directModel + " (same name upstream: no model rewrite)"
	if o.mapped {
		model = mappedPublic + " → " + mappedUpstream + " (model rewritten in every response and event)"
	}
	gw := gwLabel(o)
	fmt.Fprintf(w, "## Rosetta pass-through overhead (%s; mock %s)\n\n", gw, o.mock)
	fmt.Fprintf(w, "**%s**\n\n", gwNote(o))
	fmt.Fprintf(w, "- %s %s/%s, GOMAXPROCS=%d, CPUs=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(w, "- %s measured per run after %s warm-up, %d round(s) interleaved (direct/gateway order alternates); medians across rounds\n",
		o.dur, o.warmup, o.rounds)
	fmt.Fprintf(w, "- request: %s; model: %s; streams: %d content chunks (+ role, finish, usage, [DONE]), event delay %s; gateway access log: %s\n",
		requestLine(o), model, o.events, o.eventDelay, o.log)
	fmt.Fprintf(w, "- load generator, gateway and mock share this process and its cores: the ratio is a conservative lower bound of the gateway's throughput vs a deployment where it has cores of its own\n")
	fmt.Fprintf(w, "- mock upstream: %s\n", mockAbout(o.mock))
	printRate(w, o)
	fmt.Fprintln(w)

	fmt.Fprintf(w, "| mode | c | direct req/s | %[1]s req/s | ratio | direct p50 | direct p99 | %[1]s p50 | %[1]s p99 | added p50 |\n", gw)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		d, g := summarize(r.of("direct")), summarize(r.of("gateway"))
		ratio := 0.0
		if d.rps > 0 {
			ratio = g.rps / d.rps
		}
		flag := ""
		if r.failed() {
			flag = " **ERRORS**"
		}
		fmt.Fprintf(w, "| %s%s | %d | %.0f | %.0f | %.2f× | %s | %s | %s | %s | %s |\n",
			r.mode, flag, r.conns, d.rps, g.rps, ratio, fmtDur(d.p50), fmtDur(d.p99),
			fmtDur(g.p50), fmtDur(g.p99), fmtDur(g.p50-d.p50))
	}

	fmt.Fprintln(w, "\nCPU time of the whole process (client, mock and gateway) per request, medians; the CPU ratio (direct ÷ gateway CPU per request) is what the throughput ratio would be if the process were CPU-bound on cores of its own, and unlike req/s it hardly moves when other processes compete for the cores:")
	fmt.Fprintf(w, "\n| mode | c | direct CPU/req | %[1]s CPU/req | %[1]s's own | CPU ratio | read/write calls per req, direct | %[1]s | cores used direct / %[1]s | run-queue wait direct / %[1]s |\n", gw)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	lowUse, maxWait := 1.0, 0.0
	for _, r := range rows {
		d, g := summarize(r.of("direct")), summarize(r.of("gateway"))
		ratio := 0.0
		if g.cpu > 0 {
			ratio = float64(d.cpu) / float64(g.cpu)
		}
		fmt.Fprintf(w, "| %s | %d | %.1fµs | %.1fµs | %.1fµs | %.2f× | %.1f / %.1f | %.1f / %.1f | %.0f%% / %.0f%% | %.0f%% / %.0f%% |\n", r.mode, r.conns,
			us(d.cpu), us(g.cpu), us(g.cpu-d.cpu), ratio, d.reads, d.writes, g.reads, g.writes,
			100*d.cpuUse, 100*g.cpuUse, 100*d.wait, 100*g.wait)
		for _, x := range r.all() {
			maxWait = max(maxWait, x.waitShare())
			if r.conns >= 8 { // fewer clients may not keep the cores busy
				lowUse = min(lowUse, x.cpuUse())
			}
		}
	}
	switch {
	case maxWait > 0.1:
		fmt.Fprintf(w, "\n**Note: the machine was busy.** In some runs this process's threads waited for a core %.0f%% of the time (run-queue wait per core; 0%% on a quiet machine) and it got as little as %.0f%% of its cores: other processes held them. Its req/s and latencies measure the contention as much as the code; the CPU columns are the steadier measure. Rerun on a quiet machine for throughput.\n", 100*maxWait, 100*lowUse)
	case lowUse < 0.8:
		fmt.Fprintf(w, "\n**Note:** in some runs the process used only %.0f%% of its cores without waiting for them: it was idle, so requests stalled somewhere. Look at the max latencies in the progress output.\n", 100*lowUse)
	}

	var streams []*row
	for _, r := range rows {
		if r.mode == "stream" {
			streams = append(streams, r)
		}
	}
	if len(streams) > 0 {
		fmt.Fprintln(w, "\nStreams, time to first body byte (p50) and events per response (the direct client asks for usage, as the gateway does upstream; the gateway strips the usage chunk its client did not ask for):")
		fmt.Fprintf(w, "\n| c | direct ttfb p50 | %[1]s ttfb p50 | added | direct events | %[1]s events |\n", gw)
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|")
		for _, r := range streams {
			d, g := summarize(r.of("direct")), summarize(r.of("gateway"))
			fmt.Fprintf(w, "| %d | %s | %s | %s | %d | %d |\n", r.conns, fmtDur(d.ttfb), fmtDur(g.ttfb),
				fmtDur(g.ttfb-d.ttfb), d.events, g.events)
		}
	}

	printErrors(w, rows)
}

// requestLine describes the request the clients send.
func requestLine(o options) string {
	line := fmt.Sprintf("the %s chat conversation (a system prompt and %d turns), %d B as the gateway's client sends it non-streamed (-body %s)",
		o.conv.name, o.conv.nturns, len(chatBodyOf(o.conv, directModel, false, false)), o.conv.name)
	if slices.Contains(o.modes, "embeddings") {
		line += fmt.Sprintf("; embeddings: one text, %d B, answered with 1536 floats (%d B)",
			len(embeddingsBody(directModel)), len(testutil.EmbeddingAnswer(directModel, false)))
	}
	return line
}

// gwLabel names the gateway contender in every table: what it is.
func gwLabel(o options) string {
	switch {
	case o.bare:
		return "bare"
	case o.gateway == "shipped":
		return "rosetta"
	}
	return "in-process gw"
}

// gwAbout says what the gateway contender is, in split placement's list
// of contenders.
func gwAbout(o options) string {
	switch {
	case o.bare:
		return "-bare: the bare fasthttp pass-through (bench/bare.go) in the gateway's place"
	case o.gateway == "shipped":
		return "the shipped binary, `rosetta serve` built from this tree"
	}
	return "-gateway inprocess: the proxy package inside the bench binary, no store"
}

// gwNote says what the gateway columns measure.
func gwNote(o options) string {
	switch {
	case o.bare:
		return `-bare: the "bare" columns are the bare fasthttp pass-through (bench/bare.go), not Rosetta: the floor of the design.`
	case o.gateway == "shipped":
		return `The "rosetta" columns are the shipped binary: ` + "`rosetta serve`" + ` built from this tree, in a process of its own, ` +
			`with a configuration as a user writes it (default SQLite store, usage rows on, the JSON access log through its async writer).`
	}
	return `-gateway inprocess: the "in-process gw" columns are the proxy package inside the bench binary, ` +
		`WITHOUT a store or usage rows and with its log sent to io.Discard: not the binary people run (for that, -placement split).`
}

// printRate says how an open-loop run was paced.
func printRate(w io.Writer, o options) {
	if o.rate > 0 {
		fmt.Fprintf(w, "- open loop: %.0f requests per second per run, spread evenly over its connections, each measured from when it was sent: the req/s columns show the rate kept, and the added p50 is the proxy's latency at a load it carries\n", o.rate)
	}
}

// printErrors lists the runs that had errors, if any.
func printErrors(w io.Writer, rows []*row) {
	failed := false
	for _, r := range rows {
		for _, x := range r.all() {
			if x.failed() {
				if !failed {
					fmt.Fprintln(w, "\n**ERRORS — these numbers are not valid:**")
					failed = true
				}
				fmt.Fprintf(w, "- %s c=%d %s: %d errors, %d non-200; first: %s\n",
					r.mode, r.conns, x.target, x.errors, x.non200, x.firstError)
			}
		}
	}
}
