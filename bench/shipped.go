package main

// The shipped binary (-gateway shipped, split placement's default): the
// gateway the published figures describe is the one people run.
//
// At start the harness builds `rosetta serve` from this tree
// (`go build -o DIR/rosetta ./cmd/rosetta` in the module root, found from
// this package's source location or `go env GOMOD`) into a temporary
// directory, writes a configuration file there as a user writes it (one
// channel of type openai pointing at the mock, a static key, no store
// section: the default SQLite store, rosetta.db in the working directory,
// with usage rows on), and starts it there pinned to the servers' CPU,
// unchanged: its own GOMAXPROCS (1, from its CPU mask), its default JSON
// log and access log through its async writer to standard error, which
// goes to DIR/rosetta.log as a service manager would send it to a file or
// the journal. It listens on 127.0.0.1:0; its address comes from its
// banner on standard output, or from its log's start line (older binaries,
// a -baseline's, print the banner in demo mode only). It is stopped with
// SIGTERM, as systemd does: it drains and writes its last usage rows.

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // reads the shipped binary's usage rows
)

const (
	shippedDirPrefix = "rosetta-bench-shipped-"
	modulePath       = "github.com/rosetta-gateway/rosetta"
)

// shipped is the shipped binary's files and process: the tree's, or with
// -baseline the baseline's (baseline.go).
type shipped struct {
	kind                      string // "shipped binary", "baseline binary, rosetta@<rev>": in its process's name
	dir, bin, config, db, log string
	build                     time.Duration // how long go build took
	tree                      string        // the tree it was built from: git describe --always --dirty, and untracked Go files
	proc                      *proc
	addr                      string
	gomaxprocs                string // as its /metrics says (go_sched_gomaxprocs_threads); "?" when it does not
	profile                   string // -cpuprofile: the binary's own CPU profile, written when it stops; "" for none
}

// moduleRoot returns the directory of this module's go.mod: two levels
// up from this source file when it is there (go run, go test), else what
// `go env GOMOD` says in the working directory.
func moduleRoot() (string, error) {
	isRoot := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module "+modulePath)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if dir := filepath.Dir(filepath.Dir(file)); isRoot(dir) {
			return dir, nil
		}
	}
	out, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	if dir := filepath.Dir(strings.TrimSpace(string(out))); isRoot(dir) {
		return dir, nil
	}
	return "", fmt.Errorf("cannot find the module root of %s (go env GOMOD: %q): run the harness from the repository",
		modulePath, strings.TrimSpace(string(out)))
}

// goTool returns the go command: on PATH, else in GOROOT.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// buildShipped builds rosetta from the tree into a new temporary
// directory, which the returned value owns (remove).
func buildShipped() (*shipped, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	removeStaleDirs(shippedDirPrefix, "rosetta.pid")
	dir, err := os.MkdirTemp("", shippedDirPrefix)
	if err != nil {
		return nil, err
	}
	sh := newShipped(dir, "shipped binary")
	t0 := time.Now()
	cmd := exec.Command(goTool(), "build", "-o", sh.bin, "./cmd/rosetta")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		sh.remove()
		return nil, fmt.Errorf("go build -o %s ./cmd/rosetta (in %s): %w\n%s", sh.bin, root, err, out)
	}
	sh.build = time.Since(t0)
	sh.tree = describeTree(root)
	return sh, nil
}

// describeTree says which tree a build saw: its commit, whether tracked
// files were changed, and how many untracked Go files it compiled too.
func describeTree(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "not a git checkout"
	}
	d := strings.TrimSpace(string(out))
	st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=all").Output()
	n := 0
	for _, line := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(line, "?? ") && strings.HasSuffix(line, ".go") && !strings.HasSuffix(line, "_test.go") {
			n++
		}
	}
	if n > 0 {
		d += fmt.Sprintf(" + %d untracked Go file(s)", n)
	}
	return d
}

// newShipped is a shipped binary's files in dir; kind says which binary it
// is, in its process's name: "rosetta serve (KIND)".
func newShipped(dir, kind string) *shipped {
	return &shipped{kind: kind, dir: dir, bin: filepath.Join(dir, "rosetta"), config: filepath.Join(dir, "rosetta.yaml"),
		db: filepath.Join(dir, "rosetta.db"), log: filepath.Join(dir, "rosetta.log")}
}

func (sh *shipped) remove() { os.RemoveAll(sh.dir) } //nolint:errcheck

// shippedConfig is the configuration file: what a user writes to put the
// gateway in front of one OpenAI-compatible upstream with a static key.
// No store section: the default, SQLite in rosetta.db, usage rows on.
func shippedConfig(mockAddr string) string {
	return fmt.Sprintf(`# Written by Rosetta's load harness (bench/shipped.go), as a user writes it.
server:
  listen: 127.0.0.1:0

channels:
  - name: mock
    type: openai
    base_url: http://%s/v1
    api_keys: [%q]
    models: [%q]
    model_map:
      %s: %s

keys:
  - name: bench
    key: %q
    models: ["*"]
`, mockAddr, upstreamKey, directModel, mappedPublic, mappedUpstream, gatewayKey)
}

// shippedParts is what scripts/cachegrind.sh runs the shipped binary with,
// as the harness does: the request body (the long conversation), the
// configuration in front of the mock at mockAddr, or the gateway's key.
func shippedParts(part, mockAddr string) string {
	switch part {
	case "body":
		return string(chatBodyOf(longConv, directModel, false, false))
	case "config":
		return shippedConfig(mockAddr)
	}
	return gatewayKey
}

var (
	bannerRE = regexp.MustCompile(`Rosetta is serving on http://(\S+) `)
	// servingRE finds the address in the log's start line, JSON or text:
	// older binaries (a -baseline's) print the banner only in demo mode.
	servingRE = regexp.MustCompile(`(?m)^.*"?msg"?[=:]"rosetta is serving".*?\blisten"?[=:]"?([^"\s]+)`)
)

// start writes the configuration and starts `rosetta serve -config
// rosetta.yaml` in the directory, pinned to cpu (not pinned for cpu < 0),
// and waits for its banner.
func (sh *shipped) start(mockAddr string, cpu int) error {
	if err := os.WriteFile(sh.config, []byte(shippedConfig(mockAddr)), 0o600); err != nil {
		return err
	}
	logf, err := os.OpenFile(sh.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	args := []string{"serve", "-config", filepath.Base(sh.config)}
	if sh.profile != "" {
		abs, err := filepath.Abs(sh.profile)
		if err != nil {
			return err
		}
		args = append(args, "-cpuprofile", abs)
	}
	cmd := exec.Command(sh.bin, args...)
	cmd.Dir = sh.dir
	// The harness's environment without ROSETTA_* variables, which would
	// override the file (ROSETTA_LISTEN) or the store's key.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ROSETTA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p, err := startProc("rosetta serve ("+sh.kind+")", cmd, cpu)
	if err != nil {
		return err
	}
	p.termWait = 20 * time.Second // it drains and writes its usage rows
	sh.proc = p
	os.WriteFile(filepath.Join(sh.dir, "rosetta.pid"), []byte(strconv.Itoa(p.pid())), 0o600) //nolint:errcheck // for removeStaleDirs

	addrs := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := bannerRE.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout) //nolint:errcheck // until it exits
	}()
	polled := make(chan struct{})
	defer close(polled)
	go func() { // the log's start line, for a binary without the banner
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-polled:
				return
			case <-tick.C:
			}
			if b, err := os.ReadFile(sh.log); err == nil {
				if m := servingRE.FindSubmatch(b); m != nil {
					addrs <- string(m[1])
					return
				}
			}
		}
	}()
	select {
	case sh.addr = <-addrs:
		sh.gomaxprocs = metricsGOMAXPROCS(sh.addr)
		return nil
	case <-p.done:
		return fmt.Errorf("rosetta serve exited at start (%v)%s", p.err, sh.logTail())
	case <-time.After(30 * time.Second):
		return fmt.Errorf("rosetta serve printed no banner and logged no start line within 30s%s", sh.logTail())
	}
}

var gomaxprocsRE = regexp.MustCompile(`(?m)^go_sched_gomaxprocs_threads (\d+)`)

// metricsGOMAXPROCS reads the gateway's GOMAXPROCS from its /metrics, "?"
// when it cannot.
func metricsGOMAXPROCS(addr string) string {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := gomaxprocsRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "?"
}

// logTail is the end of the binary's standard error, for error messages.
func (sh *shipped) logTail() string {
	b, err := os.ReadFile(sh.log)
	if err != nil || len(b) == 0 {
		return ""
	}
	return fmt.Sprintf("; the end of %s:\n%s", sh.log, tail(b, 2000))
}

// logSize is the size of what the binary wrote to standard error: its log
// and access log.
func (sh *shipped) logSize() int64 {
	fi, err := os.Stat(sh.log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// usageRows counts the rows of the binary's usage log, and those with
// status 200, reading its SQLite file read-only (WAL: beside the writer).
func (sh *shipped) usageRows() (all, ok int64, err error) {
	byStatus, err := sh.usageByStatus()
	for status, n := range byStatus {
		all += n
		if status == 200 {
			ok += n
		}
	}
	return all, ok, err
}

// usageByStatus counts the rows of the binary's usage log by status.
func (sh *shipped) usageByStatus() (map[int64]int64, error) {
	db, err := sql.Open("sqlite", "file:"+sh.db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT status, count(*) FROM usage_log GROUP BY status ORDER BY status`)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", sh.db, err)
	}
	defer rows.Close()
	byStatus := map[int64]int64{}
	for rows.Next() {
		var status, n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("reading %s: %w", sh.db, err)
		}
		byStatus[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", sh.db, err)
	}
	return byStatus, nil
}

// buildShipped builds the binary for split placement, before anything is
// pinned, and arranges for its directory to go at close.
func (s *splitEnv) buildShipped(progress io.Writer) (*shipped, error) {
	fmt.Fprintln(progress, "bench: go build -o <tmp>/rosetta ./cmd/rosetta")
	sh, err := buildShipped()
	if err != nil {
		return nil, err
	}
	s.add(sh.remove) // added before the process's stop: runs after it
	s.shipped = sh
	fmt.Fprintf(progress, "bench: built %s in %.1fs\n", sh.bin, sh.build.Seconds())
	return sh, nil
}

// startShipped starts a shipped binary (the tree's or the baseline's)
// pinned to the servers' CPU in front of the mock, keeps its process in
// *into and returns its address.
func (s *splitEnv) startShipped(sh *shipped, mockAddr string, into **proc) (string, error) {
	err := sh.start(mockAddr, s.srvCPU)
	if sh.proc != nil {
		*into = sh.proc
		s.add(sh.proc.stop)
	}
	if err != nil {
		return "", err
	}
	proof, err := checkPinned("rosetta serve ("+sh.kind+", its own process)", sh.proc.pid(), s.srvCPU)
	if err != nil {
		return "", err
	}
	s.proof = append(s.proof, proof)
	return sh.addr, nil
}

// shippedFacts is what the report says a shipped binary did: its usage
// rows (read after its flush interval, 1 s by default, has passed since
// the last run: the caller waits, flushWait) and its log's size.
type shippedFacts struct {
	rows, rows200 int64
	byStatus      string // "200: N, 499: M"
	logBytes      int64
	err           error
}

// flushWait is how long the report waits for the shipped binaries' last
// usage rows: the default usage_flush is 1s.
const flushWait = 1500 * time.Millisecond

func shippedFactsOf(sh *shipped) shippedFacts {
	if sh == nil {
		return shippedFacts{err: errors.New("no shipped binary")}
	}
	var f shippedFacts
	var byStatus map[int64]int64
	if byStatus, f.err = sh.usageByStatus(); f.err == nil {
		var parts []string
		for _, st := range slices.Sorted(maps.Keys(byStatus)) {
			f.rows += byStatus[st]
			parts = append(parts, fmt.Sprintf("%d: %d", st, byStatus[st]))
		}
		f.rows200, f.byStatus = byStatus[200], strings.Join(parts, ", ")
	}
	f.logBytes = sh.logSize()
	return f
}
