package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/pgtest"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// The cluster test's figures: 3 s windows; the key's 1200 rpm is 60 a
// window, the capped channel's 600 rpm 30 a window; the load is twice each.
const (
	fleetWindow  = 3 * time.Second
	keyPerWindow = 60
	chanPerWin   = 30
	gossipKey    = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // base64 of 32 bytes
)

// TestClusterHoldsTheLimits runs three gateway processes on loopback, one
// PostgreSQL store and a mock upstream. A key's load at twice its rpm, and
// a model's at twice its capped channel's rpm, spread over the nodes: the
// fleet admits each limit per window within ±10 %. One node is killed: the
// others serve and the limits hold. It comes back: it rejoins and its first
// admissions see the fleet's count. The key is revoked on one node: all
// three refuse it within a second. A node with another gossip key is
// refused, and says so. Each admission is counted in the window the
// gateway admitted it in (fleetLoad.admittedBy): on a busy machine a
// request sent at the end of one window can be admitted in the next.
func TestClusterHoldsTheLimits(t *testing.T) {
	up := newCountingUpstream(t)
	dsn := pgtest.NewDatabase(t)
	env := []string{"ROSETTA_ADMIN_PASSWORD=" + browserAdminPassword, "ROSETTA_GOSSIP_KEY=" + gossipKey,
		"ROSETTA_SECRET_KEY=" + strings.Repeat("cd", 32)}
	gossip := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	nodes := make([]*gatewayProcess, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		nodes[i] = &gatewayProcess{name: "node" + strconv.Itoa(i), addr: freeAddr(t), env: env,
			config: clusterConfig(t, i, dsn, up.URL, gossip[i], gossip)}
		wg.Add(1)
		go func() { defer wg.Done(); nodes[i].start(t) }()
	}
	wg.Wait()
	for _, n := range nodes {
		waitMembers(t, n, 3, 5*time.Second)
	}

	admin := consoleClient(t, nodes[0].url())
	if fleet, _ := admin.call("GET", "/console/api/channels", nil)["fleet"].([]any); len(fleet) != 3 {
		t.Errorf("the console's channel list shows a fleet of %d nodes, want 3: %v", len(fleet), fleet)
	}
	created := admin.call("POST", "/console/api/keys", map[string]any{"name": "fleet", "rpm": keyPerWindow * 20})
	secret, id := created["secret"].(string), int(created["id"].(float64))

	// Three nodes, twice the limits.
	load := startLoad(t, nodes, secret, dsn)
	start := time.Now()
	time.Sleep(3*fleetWindow + fleetWindow/5) // two whole windows at least
	checkWindows(t, "3 nodes", load, up, start, time.Now(), keyPerWindow, chanPerWin)

	// One node dies; the others go on.
	nodes[2].kill()
	load.only(nodes[:2])
	start = time.Now()
	time.Sleep(2 * fleetWindow)
	end := time.Now()
	chans := perWindow(up.hitsOf("sk-capped-0123456789"), start, end)
	for w, n := range load.admittedBy(t, start, end) {
		t.Logf("2 nodes, window %d: the key admitted %d (limit %d), the capped channel got %d (limit %d)", w, n, keyPerWindow, chans[w], chanPerWin)
		if n > keyPerWindow*11/10 {
			t.Errorf("2 nodes, window %d: %d admitted, over the limit %d", w, n, keyPerWindow)
		}
		if chans[w] > chanPerWin*11/10 {
			t.Errorf("2 nodes, window %d: the capped channel got %d, over its limit %d", w, chans[w], chanPerWin)
		}
	}
	if bad := load.failures(start, end); bad > 0 {
		t.Errorf("2 nodes: %d requests failed (not 200 or 429) after a node died", bad)
	}

	// It comes back under the same name and is sent a burst of 60 while
	// the others hold the key at its limit. Joined before it serves, it
	// sees the fleet's counts from its first request: the windows of the
	// burst still admit the limit, not the limit again on this node.
	nodes[2].start(t)
	burstStart := time.Now()
	burst := 0
	for range keyPerWindow {
		a := sendForAnswer(nodes[2].url(), secret, "m")
		if a.status == 0 {
			t.Fatalf("the restarted node: %v", a.err)
		}
		load.record(a)
		if a.status == 200 {
			burst++
		}
	}
	time.Sleep(fleetWindow / 2)
	load.stop()
	burstWindows := load.admittedIn(t, burstStart, time.Now())
	t.Logf("the restarted node admitted %d of a burst of %d; the fleet's windows then: %v", burst, keyPerWindow, burstWindows)
	for w, n := range burstWindows {
		if n > keyPerWindow*11/10 {
			t.Errorf("window %d of the restarted node's burst: the fleet admitted %d, over the limit %d: the node did not see the fleet's count", w, n, keyPerWindow)
		}
	}
	waitMembers(t, nodes[0], 3, 5*time.Second)
	consoleLimitsReachTheFleet(t, admin, nodes, up.URL)

	// Revoked on one node, refused by all three within a second: by
	// gossip, as the store poll of a node in a cluster runs every 5 s.
	admin.call("POST", "/console/api/keys/"+strconv.Itoa(id)+"/revoke", nil)
	revoked := time.Now()
	for _, n := range nodes {
		waitStatus(t, n.url(), secret, "/v1/models", "", http.StatusUnauthorized, time.Second-time.Since(revoked))
	}
	t.Logf("all three nodes refuse the revoked key %s after the revocation", time.Since(revoked).Round(time.Millisecond))

	// A node with another gossip key cannot join.
	intruder := &gatewayProcess{addr: freeAddr(t), config: clusterConfig(t, 3, dsn, up.URL, freeAddr(t), gossip[:1]),
		env: append(append([]string(nil), env...), "ROSETTA_GOSSIP_KEY=another-key-of-32-bytes-long-xxx")}
	intruder.start(t)
	waitLog(t, intruder, "cannot join the cluster: the nodes there use another gossip key")
	waitLog(t, nodes[0], "a node with another gossip key tried to talk to this one")
	if got := members(t, nodes[0]); got != 3 {
		t.Errorf("the fleet has %d members after the intruder knocked, want 3", got)
	}
}

// waitLog waits up to two seconds for the process to log text (its log
// is written asynchronously).
func waitLog(t *testing.T, p *gatewayProcess, text string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(p.logs.String(), text); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%s never logged %q:\n%s", p.addr, text, p.logs.String())
			return
		}
	}
}

// clusterConfig is node i's configuration: the shared store, a channel
// for model m, and for model c a capped channel (30 a window) with a
// spare behind it.
func clusterConfig(t *testing.T, i int, dsn, upstream, bind string, join []string) string {
	t.Helper()
	cfg := fmt.Sprintf(`store: {driver: postgres, dsn: '%s'}
channels:
  - {name: up, type: openai, base_url: '%[2]s/v1', api_keys: [sk-up-0123456789], models: [m]}
  - {name: capped, type: openai, base_url: '%[2]s/v1', api_keys: [sk-capped-0123456789], models: [c], rpm: %[3]d}
  - {name: spare, type: openai, base_url: '%[2]s/v1', api_keys: [sk-spare-0123456789], models: [c], priority: 1}
keys:
  - {name: static, key: sk-static-0123456789abcdef}
cluster:
  enabled: true
  node_name: node%[4]d
  bind: %[5]s
  join: [%[6]s]
  window: %[7]s
`, dsn, upstream, chanPerWin*20, i, bind, strings.Join(join, ", "), fleetWindow)
	path := filepath.Join(t.TempDir(), "rosetta.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gatewayProcess is a rosetta serve that can be killed and started again
// on the same addresses.
type gatewayProcess struct {
	name         string // its cluster.node_name, where it has one
	addr, config string
	env          []string
	cmd          *exec.Cmd
	logs         *testutil.Buffer
}

func (p *gatewayProcess) url() string { return "http://" + p.addr }

// start runs the process and returns once it answers.
func (p *gatewayProcess) start(t *testing.T) {
	t.Helper()
	p.logs = &testutil.Buffer{}
	p.cmd = exec.Command(bin, "serve", "-config", p.config)
	p.cmd.Dir = t.TempDir()
	p.cmd.Env = append(append(os.Environ(), "ROSETTA_LISTEN="+p.addr), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := p.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(p.url() + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start:\n%s", p.logs.String())
		}
	}
}

// kill ends the process without a chance to leave.
func (p *gatewayProcess) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// members is the number of members /readyz of node n lists.
func members(t *testing.T, n *gatewayProcess) int {
	t.Helper()
	resp, err := http.Get(n.url() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Cluster struct {
			Members []struct{ Name string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&r)
	return len(r.Cluster.Members)
}

func waitMembers(t *testing.T, n *gatewayProcess, want int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); members(t, n) != want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s lists %d members, want %d:\n%s", n.addr, members(t, n), want, n.logs.String())
		}
	}
}

// sendChat posts a chat request for model with the key, and returns the
// status and the body.
func sendChat(base, secret, model string) (int, string, error) {
	resp, err := postChat(base, secret, model)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// postChat posts a chat request for model with the key.
func postChat(base, secret, model string) (*http.Response, error) {
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Hi"}]}`
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// answer is one request of the load: when it was sent and answered, its
// status (0: no answer, err says why) and the gateway's request id.
type answer struct {
	at, done time.Time
	status   int
	id       string
	err      error
}

// sendForAnswer posts a chat request for model with the key.
func sendForAnswer(base, secret, model string) answer {
	a := answer{at: time.Now()}
	resp, err := postChat(base, secret, model)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		a.status, a.id = resp.StatusCode, resp.Header.Get("X-Request-Id")
	}
	a.done, a.err = time.Now(), err
	return a
}

// fleetLoad sends, round robin over the nodes, the key's requests for m
// and the static key's for c, each at twice its limit.
type fleetLoad struct {
	mu       sync.Mutex
	nodes    []*gatewayProcess
	key      []answer
	inFlight map[int]time.Time // by request number: when it was sent
	sent     int
	done     chan struct{}
	wg       sync.WaitGroup
	db       *sql.DB // the fleet's store, for the times it admitted requests
}

func startLoad(t *testing.T, nodes []*gatewayProcess, secret, dsn string) *fleetLoad {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := &fleetLoad{nodes: nodes, inFlight: map[int]time.Time{}, done: make(chan struct{}), db: db}
	l.run(secret, "m", 2*keyPerWindow, l.record)
	l.run("sk-static-0123456789abcdef", "c", 2*chanPerWin, func(a answer) {
		if a.status != 200 && a.err == nil {
			t.Errorf("a request to the capped model got %d: a channel at its limit must be passed over", a.status)
		}
	})
	t.Cleanup(l.stop)
	return l
}

// oldestCounts is the age of the oldest count the nodes the load goes to
// last heard from each other, read once from each node's /readyz: a bound
// on how late each learnt of the others' admissions, for the log. (Read
// now and then, not polled: polling three nodes was as much load as the
// test's own.)
func (l *fleetLoad) oldestCounts() time.Duration {
	l.mu.Lock()
	nodes := l.nodes
	l.mu.Unlock()
	var oldest time.Duration
	for _, n := range nodes {
		oldest = max(oldest, countsAge(n, nodes))
	}
	return oldest
}

// countsAge is the age of the oldest count node n last heard from the
// others of nodes (0 when it cannot tell).
func countsAge(n *gatewayProcess, nodes []*gatewayProcess) time.Duration {
	resp, err := http.Get(n.url() + "/readyz")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var r struct {
		Cluster struct {
			Members []struct {
				Name      string
				CountsAge int64 `json:"counts_age_ms"`
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&r)
	var oldest int64
	for _, m := range r.Cluster.Members {
		for _, o := range nodes {
			if o != n && o.name == m.Name {
				oldest = max(oldest, m.CountsAge)
			}
		}
	}
	return time.Duration(oldest) * time.Millisecond
}

// run sends perWindow requests a window, evenly, each on the next node.
func (l *fleetLoad) run(secret, model string, perWindow int, record func(answer)) {
	l.every(fleetWindow/time.Duration(perWindow), func(i int) {
		l.mu.Lock()
		n, seq := l.nodes[i%len(l.nodes)], l.sent
		l.sent++
		l.inFlight[seq] = time.Now()
		l.mu.Unlock()
		go func() {
			a := sendForAnswer(n.url(), secret, model)
			record(a)
			l.mu.Lock()
			delete(l.inFlight, seq)
			l.mu.Unlock()
		}()
	})
}

// every calls fn every d, with the number of the call, until the load
// stops.
func (l *fleetLoad) every(d time.Duration, fn func(i int)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-l.done:
				return
			case <-tick.C:
			}
			fn(i)
		}
	}()
}

// record adds an answer of the key sent outside the load.
func (l *fleetLoad) record(a answer) { l.mu.Lock(); l.key = append(l.key, a); l.mu.Unlock() }

// admittedIn counts the key's 200s by window, for every window that
// overlaps from..to.
func (l *fleetLoad) admittedIn(t *testing.T, from, to time.Time) map[int64]int {
	ms := fleetWindow.Milliseconds()
	return l.admittedBy(t, time.UnixMilli((from.UnixMilli()/ms-1)*ms+ms-1), time.UnixMilli((to.UnixMilli()/ms+2)*ms))
}

// only sends the load to these nodes from now on.
func (l *fleetLoad) only(nodes []*gatewayProcess) { l.mu.Lock(); l.nodes = nodes; l.mu.Unlock() }

func (l *fleetLoad) stop() {
	select {
	case <-l.done:
	default:
		close(l.done)
		l.wg.Wait()
		time.Sleep(200 * time.Millisecond) // the last answers
	}
}

// admittedBy counts the key's 200s by the window the gateway admitted
// them in, for the windows wholly between from and to, once every request
// sent before to has its answer. A request sent and answered in one window
// was admitted in it; for one whose answer came in a later window, the
// time of its admission is the one its usage row holds.
func (l *fleetLoad) admittedBy(t *testing.T, from, to time.Time) map[int64]int {
	t.Helper()
	l.settle(t, to)
	ms := fleetWindow.Milliseconds()
	first, end := time.UnixMilli((from.UnixMilli()/ms+1)*ms), time.UnixMilli(to.UnixMilli()/ms*ms) // perWindow's
	var times []time.Time
	var straddling []string
	var slowest time.Duration
	l.mu.Lock()
	for _, a := range l.key {
		switch {
		case a.status != 200 || a.done.Before(first) || !a.at.Before(end): // admitted outside the windows
			continue
		case a.at.UnixMilli()/ms == a.done.UnixMilli()/ms:
			times = append(times, a.at)
		default:
			straddling = append(straddling, a.id)
		}
		slowest = max(slowest, a.done.Sub(a.at))
	}
	l.mu.Unlock()
	// Why a window's count is off, should it be: slow answers, or
	// counts that took long to reach the other nodes.
	t.Logf("the slowest admitted request took %v (%d answered in a later window than sent, counted when the store says they were admitted); the newest counts the nodes had heard from each other were, when counted, at most %v old (a node that counts nothing new sends nothing)",
		slowest.Round(time.Millisecond), len(straddling), l.oldestCounts())
	return perWindow(append(times, l.admittedAt(t, straddling)...), from, to)
}

// settle waits until every request sent before to has its answer.
func (l *fleetLoad) settle(t *testing.T, to time.Time) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		waiting := 0
		for _, at := range l.inFlight {
			if at.Before(to) {
				waiting++
			}
		}
		l.mu.Unlock()
		if waiting == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests sent before %v still unanswered after 10 s", waiting, to.Format(time.StampMilli))
		}
	}
}

// admittedAt reads from the fleet's store when the requests ids were
// admitted (a usage row's time is its request's, at which the limiter
// counted it), waiting for the nodes' usage writers to write them.
func (l *fleetLoad) admittedAt(t *testing.T, ids []string) []time.Time {
	t.Helper()
	if len(ids) == 0 {
		return nil
	}
	query := `SELECT time_ns FROM usage_log WHERE request_id = ANY($1)`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rows, err := l.db.QueryContext(context.Background(), query, ids)
		if err != nil {
			t.Fatal(err)
		}
		var times []time.Time
		for rows.Next() {
			var ns int64
			if err := rows.Scan(&ns); err != nil {
				t.Fatal(err)
			}
			times = append(times, time.Unix(0, ns))
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if len(times) == len(ids) {
			return times
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store holds %d of the usage rows of %d requests after 10 s", len(times), len(ids))
		}
	}
}

// failures counts the key's answers that are neither 200 nor 429.
func (l *fleetLoad) failures(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.key {
		if a.at.After(from) && a.at.Before(to) && a.status != 200 && a.status != 429 {
			n++
		}
	}
	return n
}

// perWindow counts times by window (Unix ms / the window), for the windows
// wholly between from and to, each present even when empty.
func perWindow(times []time.Time, from, to time.Time) map[int64]int {
	ms := fleetWindow.Milliseconds()
	first, last := from.UnixMilli()/ms+1, to.UnixMilli()/ms-1
	out := map[int64]int{}
	for w := first; w <= last; w++ {
		out[w] = 0
	}
	for _, at := range times {
		if w := at.UnixMilli() / ms; w >= first && w <= last {
			out[w]++
		}
	}
	return out
}

// checkWindows checks that every whole window between from and to
// admitted the key's limit within ±10 %, and sent the capped channel its
// limit within ±10 % (the rest went to the spare channel).
func checkWindows(t *testing.T, phase string, l *fleetLoad, up *countingUpstream, from, to time.Time, keyLimit, chanLimit int) {
	t.Helper()
	keys, chans := l.admittedBy(t, from, to), perWindow(up.hitsOf("sk-capped-0123456789"), from, to)
	if len(keys) < 2 {
		t.Fatalf("%s: %d whole windows measured, want at least 2", phase, len(keys))
	}
	for w, n := range keys {
		t.Logf("%s, window %d: the key admitted %d (limit %d), the capped channel got %d (limit %d)", phase, w, n, keyLimit, chans[w], chanLimit)
		if n < keyLimit*9/10 || n > keyLimit*11/10 {
			t.Errorf("%s, window %d: the key admitted %d, want %d ±10%%", phase, w, n, keyLimit)
		}
		if c := chans[w]; c < chanLimit*9/10 || c > chanLimit*11/10 {
			t.Errorf("%s, window %d: the capped channel got %d, want %d ±10%%", phase, w, c, chanLimit)
		}
	}
}

// countingUpstream is an OpenAI mock that remembers when each of its API
// keys was used.
type countingUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string][]time.Time
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	u := &countingUpstream{hits: map[string][]time.Time{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		u.mu.Lock()
		u.hits[key] = append(u.hits[key], time.Now())
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *countingUpstream) hitsOf(key string) []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Time(nil), u.hits[key]...)
}

// cluster.enabled without the gossip key stops the start, saying which
// variable to set; with it on SQLite files, the start warns what the
// fleet does not share.
func TestClusterStartChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rosetta.yaml")
	cfg := "cluster: {enabled: true, bind: '" + freeAddr(t) + "', secret_key_env: TEST_GOSSIP_KEY}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "-config", path)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "ROSETTA_LISTEN="+freeAddr(t))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cluster.enabled: the gossip key is missing: set TEST_GOSSIP_KEY") {
		t.Fatalf("started without the gossip key: %v\n%s", err, out)
	}

	p := &gatewayProcess{addr: freeAddr(t), config: path, env: []string{"TEST_GOSSIP_KEY=" + gossipKey}}
	p.start(t)
	waitLog(t, p, "cluster on SQLite files: every node has a store of its own")
}

// The Channels page of a node in a cluster shows the fleet, in a browser:
// two nodes on SQLite files, this one marked. Then one gets SIGTERM: it
// leaves, and the other stops counting it at once.
func TestFleetInBrowser(t *testing.T) {
	gossip := []string{freeAddr(t), freeAddr(t)}
	env := []string{"ROSETTA_ADMIN_PASSWORD=" + browserAdminPassword, "ROSETTA_GOSSIP_KEY=" + gossipKey}
	nodes := make([]*gatewayProcess, 2)
	for i := range nodes {
		path := filepath.Join(t.TempDir(), "rosetta.yaml")
		cfg := fmt.Sprintf("cluster: {enabled: true, node_name: fleet%d, bind: '%s', join: ['%s']}\n", i, gossip[i], gossip[0])
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &gatewayProcess{addr: freeAddr(t), config: path, env: env}
		nodes[i].start(t)
	}
	waitMembers(t, nodes[0], 2, 5*time.Second)
	b := newTab(t, nodes[0].url())
	login(b)
	b.page("channels", "Channels")
	b.waitJS("the fleet card", `document.querySelectorAll('section[aria-labelledby=fleet] tbody tr').length === 2`)
	rows := evalJS[[]string](b, `[...document.querySelectorAll('section[aria-labelledby=fleet] tbody tr')].map(r => r.innerText)`)
	if !strings.Contains(rows[0], "fleet0") || !strings.Contains(rows[0], "this node") || !strings.Contains(rows[1], "fleet1") ||
		!strings.Contains(rows[1], gossip[1]) {
		t.Errorf("fleet rows %q, want fleet0 (this node) then fleet1 at %s", rows, gossip[1])
	}
	b.shot("fleet")

	if err := nodes[1].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	for live, known := reach(t, nodes[0]); live != 1 || known != 1; live, known = reach(t, nodes[0]) {
		if time.Since(left) > 2*time.Second {
			t.Fatalf("2 s after the other node's SIGTERM, this one hears %d of %d nodes, want 1 of 1", live, known)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the other node left %s after its SIGTERM", time.Since(left).Round(time.Millisecond))
	if err := nodes[1].cmd.Wait(); err != nil {
		t.Errorf("the node that left exited with %v, want 0", err)
	}
}

// reach is the live and known nodes node n's /readyz reports.
func reach(t *testing.T, n *gatewayProcess) (live, known int) {
	t.Helper()
	resp, err := http.Get(n.url() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Cluster struct{ Live, Known int } }
	json.NewDecoder(resp.Body).Decode(&r)
	return r.Cluster.Live, r.Cluster.Known
}
