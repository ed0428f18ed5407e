package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
)

// TestSim runs fleets of 10 and 50 nodes in one process over an in-memory
// network (simNet: packets are queued, and dropped when a node's queue is
// full, as UDP drops them; memberlist's MockNetwork blocks a sender until
// its packet is read, and deadlocks under this load; 50 nodes' sockets on
// loopback starve on two shared cores), with 1,000 keys each loaded at twice its limit from
// random nodes, and reports per fleet the admitted count against the limit
// per key and window, and the gossip bytes per node per second (the table
// of README.md). It fails when the fleet does not hold (check). Opt-in, it
// takes about two minutes:
//
//	ROSETTA_SIM=1 go test -run TestSim -v ./cluster/
func TestSim(t *testing.T) {
	if os.Getenv("ROSETTA_SIM") == "" {
		t.Skip("set ROSETTA_SIM=1 to run the fleet simulation")
	}
	for _, c := range []struct {
		nodes int
		rpm   int64
	}{{10, 600}, {50, 600}, {50, 150}} {
		t.Run(fmt.Sprintf("%d nodes, %d rpm", c.nodes, c.rpm), func(t *testing.T) {
			r := simulate(t, simConfig{nodes: c.nodes, keys: 1000, rpm: c.rpm, window: 2 * time.Second, windows: simWindows()})
			t.Log(r)
			r.check(t)
		})
	}
}

// The fleet's targets: admitted within simTolerance of the limit on
// average per key and window, where 99 % of the counts arrive within
// keptUp (the README's d of ~100 ms, with room). Past keptUp it is this
// one process that cannot run the fleet's gossip in time (50 nodes on 2
// shared cores), and only the overshoot bound is checked.
const (
	simTolerance = 0.15
	keptUp       = 3 * DefaultGossipInterval
)

// check fails the test where the fleet did not hold, or where the
// simulation could not tell (its load generator, in the same process,
// offered under 1.8× the limits: the machine is too busy for it):
//   - a count never reached the other node, or the median delay is over
//     keptUp (the counts do not converge in time);
//   - a key's window admitted more than the overshoot bound (README.md:
//     R × d, with d the delay of the slowest 1 % measured, plus one
//     request of granularity);
//   - where the delays kept up: a node saw another as failed, or the keys
//     were admitted more than simTolerance over or under their limit on
//     average (they are offered twice it).
func (r simResult) check(t *testing.T) {
	t.Helper()
	if r.load < 1.8 {
		t.Fatalf("the load generator offered %.2f× the limits, not 2×: this process did not keep up, and the figures tell nothing", r.load)
	}
	if r.lost > 0 {
		t.Errorf("%d of %d probe counts never reached the other node within %v", r.lost, r.probes, probeTimeout)
	}
	if r.lagMedian > keptUp {
		t.Errorf("counts reached another node in %v (median), over %v", r.lagMedian, keptUp)
	}
	rate := r.load * float64(r.limit) / r.cfg.window.Seconds() // one key's attempts a second, fleet-wide
	bound := 1 + (rate*r.lagP99.Seconds()+1)/float64(r.limit)
	if r.worst > bound {
		t.Errorf("a key's window admitted %.3f× its limit, over the bound %.3f (%.1f requests a second, delay p99 %v)",
			r.worst, bound, rate, r.lagP99)
	}
	if r.lagP99 > keptUp {
		t.Logf("delay p99 %v over %v: the simulation did not keep up, only the bound is checked", r.lagP99, keptUp)
		return
	}
	if r.minLive != r.cfg.nodes {
		t.Errorf("a node counted %d live nodes of %d", r.minLive, r.cfg.nodes)
	}
	if r.mean < 1-simTolerance || r.mean > 1+simTolerance {
		t.Errorf("the keys' windows admitted %.3f× their limit on average, beyond ±%.0f %%", r.mean, 100*simTolerance)
	}
}

type simConfig struct {
	nodes, keys int
	rpm         int64 // per key; 600 is 20 a 2 s window, 150 is 5
	window      time.Duration
	windows     int // whole windows measured, after one of warm-up
}

type simResult struct {
	cfg                      simConfig
	limit                    int64
	load                     float64       // attempts ÷ limit, per key and window
	minLive                  int           // the fewest live nodes any node counted
	probes, lost             int           // delay probes sent, and those never counted by the other node
	dropped                  int64         // packets lost at full queues
	lagMedian, lagP99        time.Duration // from an admission on a node until another node counts it
	mean, p99, worst, lowest float64       // admitted ÷ limit per key and window
	payload, packets         float64       // bytes per node per second: the gateway's messages; every UDP packet
}

func (r simResult) String() string {
	return fmt.Sprintf("| %d | %d | %d | %.2f× | %.3f | %.3f | %.3f | %.3f | %d / %d ms | %.1f | %.1f | %d | %d |", r.cfg.nodes, r.cfg.keys, r.limit,
		r.load, r.mean, r.p99, r.worst, r.lowest, r.lagMedian.Milliseconds(), r.lagP99.Milliseconds(),
		r.payload/1024, r.packets/1024, r.minLive, r.dropped)
}

// simNet is an in-memory network of memberlist transports.
type simNet struct {
	mu      sync.Mutex
	nodes   map[string]*simTransport
	next    int
	bytes   atomic.Int64 // of every packet sent
	dropped atomic.Int64 // packets dropped at a full queue
}

// simTransport is one node's end of a simNet (memberlist.NodeAwareTransport).
type simTransport struct {
	net     *simNet
	addr    *net.UDPAddr
	packets chan *memberlist.Packet
	streams chan net.Conn
}

func (sn *simNet) transport() *simTransport {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.next++
	t := &simTransport{net: sn, addr: &net.UDPAddr{IP: net.IPv4(10, 0, byte(sn.next>>8), byte(sn.next)), Port: 7946},
		packets: make(chan *memberlist.Packet, 4096), streams: make(chan net.Conn, 16)}
	if sn.nodes == nil {
		sn.nodes = map[string]*simTransport{}
	}
	sn.nodes[t.addr.String()] = t
	return t
}

func (sn *simNet) to(addr string) *simTransport {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.nodes[addr]
}

func (t *simTransport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return t.addr.IP, t.addr.Port, nil
}

func (t *simTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	now := time.Now()
	t.net.bytes.Add(int64(len(b)))
	dest := t.net.to(addr)
	if dest == nil {
		return now, nil // lost, as UDP to no one
	}
	select {
	case dest.packets <- &memberlist.Packet{Buf: append([]byte(nil), b...), From: t.addr, Timestamp: now}:
	default:
		t.net.dropped.Add(1)
	}
	return now, nil
}

func (t *simTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	return t.WriteTo(b, a.Addr)
}

func (t *simTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }
func (t *simTransport) StreamCh() <-chan net.Conn           { return t.streams }

func (t *simTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	dest := t.net.to(addr)
	if dest == nil {
		return nil, fmt.Errorf("no node at %s", addr)
	}
	mine, theirs := net.Pipe()
	select {
	case dest.streams <- theirs:
		return mine, nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("dial %s: timeout", addr)
	}
}

func (t *simTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return t.DialTimeout(a.Addr, timeout)
}

func (t *simTransport) Shutdown() error {
	t.net.mu.Lock()
	delete(t.net.nodes, t.addr.String())
	t.net.mu.Unlock()
	return nil
}

func simulate(t *testing.T, cfg simConfig) simResult {
	network := &simNet{}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	nodes := make([]*Node, cfg.nodes)
	limiters := make([]*ratelimit.Limiter, cfg.nodes)
	for i := range nodes {
		name := "sim" + strconv.Itoa(i)
		n := New(Options{Name: name, Window: cfg.window, Log: quiet, Transport: network.transport()})
		if i > 0 {
			n.opts.Join = []string{nodes[0].Addr()}
		}
		limiters[i] = ratelimit.New(n, cfg.window)
		if err := n.Start(limiters[i], Handlers{}); err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		defer n.Leave(time.Second)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if live, _ := nodes[cfg.nodes-1].Reach(); live == cfg.nodes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fleet did not form")
		}
	}
	states := make([][]*ratelimit.State, cfg.nodes)
	for i := range states {
		for k := range cfg.keys {
			states[i] = append(states[i], limiters[i].State("key"+strconv.Itoa(k)))
		}
	}

	// Twice each key's limit a window, from random nodes, spread evenly.
	lim := ratelimit.Limits{RPM: cfg.rpm}
	limit := (cfg.rpm*cfg.window.Milliseconds() + 59_999) / 60_000
	windowMs := cfg.window.Milliseconds()
	first := time.Now().UnixMilli()/windowMs + 2 // after a whole window of warm-up
	last := first + int64(cfg.windows) - 1
	admitted := map[[2]int64]int64{} // (key, window) → admitted
	attempts := map[int64]int64{}    // window → attempts, all keys
	rate := float64(2*limit*int64(cfg.keys)) / cfg.window.Seconds()
	r := rand.New(rand.NewPCG(1, uint64(cfg.nodes)))
	var bytes0, packets0 int64
	var start time.Time
	minLive := cfg.nodes
	lags := probeLags(nodes, limiters, last*windowMs)
	begin, sent := time.Now(), 0
	for k := 0; ; time.Sleep(2 * time.Millisecond) {
		now := time.Now().UnixMilli() / windowMs
		if now > last {
			break
		}
		if now == first && start.IsZero() {
			start, bytes0, packets0 = time.Now(), sentBytes(nodes), network.bytes.Load()
		}
		if now >= first {
			for _, n := range nodes {
				live, _ := n.Reach()
				minLive = min(minLive, live)
			}
		}
		// As many attempts as the rate asks by now, however late the
		// loop wakes up.
		for due := int(time.Since(begin).Seconds() * rate); sent < due; sent++ {
			node := r.IntN(cfg.nodes)
			if limiters[node].Admit(states[node][k], lim, 0).Allowed {
				admitted[[2]int64{int64(k), now}]++
			}
			attempts[now]++
			k = (k + 1) % cfg.keys
		}
	}
	elapsed := time.Since(start).Seconds()
	var ratios []float64
	for k := range cfg.keys {
		for w := first; w <= last; w++ {
			ratios = append(ratios, float64(admitted[[2]int64{int64(k), w}])/float64(limit))
		}
	}
	slices.Sort(ratios)
	var sum float64
	for _, v := range ratios {
		sum += v
	}
	lag := <-lags
	lost := 0
	for _, d := range lag {
		if d >= probeTimeout {
			lost++
		}
	}
	var tried int64
	for w := first; w <= last; w++ {
		tried += attempts[w]
	}
	return simResult{cfg: cfg, limit: limit, load: float64(tried) / float64(int64(cfg.windows)*limit*int64(cfg.keys)),
		minLive: minLive, probes: len(lag), lost: lost, dropped: network.dropped.Load(), lagMedian: lag[len(lag)/2], lagP99: lag[len(lag)*99/100], mean: sum / float64(len(ratios)), p99: ratios[len(ratios)*99/100],
		worst: ratios[len(ratios)-1], lowest: ratios[0],
		payload: float64(sentBytes(nodes)-bytes0) / float64(cfg.nodes) / elapsed,
		packets: float64(network.bytes.Load()-packets0) / float64(cfg.nodes) / elapsed}
}

// probeTimeout is how long a delay probe waits for its count to arrive.
const probeTimeout = 5 * time.Second

// probeLags measures, until the Unix millisecond end, how long an
// admission on a random node takes to reach another random node's sums:
// the propagation delay d of the overshoot bound. It sends the sorted lags
// when done.
func probeLags(nodes []*Node, limiters []*ratelimit.Limiter, end int64) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var lags []time.Duration
		r := rand.New(rand.NewPCG(7, 7))
		for i := 0; time.Now().UnixMilli() < end; i++ {
			from, to := r.IntN(len(nodes)), r.IntN(len(nodes)-1)
			if to >= from {
				to++
			}
			key := "probe" + strconv.Itoa(i)
			seen := nodes[to].Track(key)
			start := time.Now()
			limiters[from].Admit(limiters[from].State(key), ratelimit.Limits{}, 0)
			for w := limiters[from].Now(); ; time.Sleep(time.Millisecond) {
				if req, _ := seen.Others(w); req > 0 {
					lags = append(lags, time.Since(start))
					break
				}
				if time.Since(start) >= probeTimeout {
					lags = append(lags, time.Since(start)) // lost, or a window went by
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		slices.Sort(lags)
		out <- lags
	}()
	return out
}

func sentBytes(nodes []*Node) (n int64) {
	for _, node := range nodes {
		n += node.Stats().SentBytes.Load()
	}
	return n
}

// simWindows is how many windows the simulation measures: ROSETTA_SIM's
// value when it is a number above 1, else 4.
func simWindows() int {
	if n, err := strconv.Atoi(os.Getenv("ROSETTA_SIM")); err == nil && n > 1 {
		return n
	}
	return 4
}
