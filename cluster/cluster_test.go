package cluster

import (
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// testNode is a node on loopback with its limiter, and what it received.
type testNode struct {
	*Node
	lim  *ratelimit.Limiter
	logs *testutil.Buffer

	mu       sync.Mutex
	keys     [][32]byte
	channels int
}

// fastFailure makes memberlist notice a dead node within about a second.
func fastFailure(c *memberlist.Config) {
	c.ProbeInterval, c.ProbeTimeout = 100*time.Millisecond, 50*time.Millisecond
	c.SuspicionMult, c.SuspicionMaxTimeoutMult = 1, 1
	c.GossipInterval = 50 * time.Millisecond
}

// startNode starts a node called name on a loopback port, joining join.
func startNode(t *testing.T, name string, key []byte, join ...string) *testNode {
	t.Helper()
	return startNodeAt(t, name, "127.0.0.1:0", key, join...)
}

// startNodeAt is startNode on the address bind.
func startNodeAt(t *testing.T, name, bind string, key []byte, join ...string) *testNode {
	t.Helper()
	return startNodeWith(t, name, bind, key, nil, join...)
}

// startNodeWith is startNodeAt with a count of open streams to report.
func startNodeWith(t *testing.T, name, bind string, key []byte, open func() int, join ...string) *testNode {
	t.Helper()
	tn := &testNode{logs: &testutil.Buffer{}}
	tn.Node = New(Options{Name: name, Bind: bind, Join: join, SecretKey: key, Window: time.Minute,
		Version: "test", Log: slog.New(slog.NewTextHandler(tn.logs, nil)), configure: fastFailure})
	tn.lim = ratelimit.New(tn.Node, time.Minute)
	err := tn.Start(tn.lim, Handlers{
		KeyChanged: func(h [32]byte) { tn.mu.Lock(); tn.keys = append(tn.keys, h); tn.mu.Unlock() },
		ChannelsChanged: func() {
			tn.mu.Lock()
			tn.channels++
			tn.mu.Unlock()
		},
		OpenStreams: open,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tn.Leave(time.Second) })
	return tn
}

// eventually fails the test unless cond holds within d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func TestNodesShareCountsAndInvalidations(t *testing.T) {
	a := startNodeWith(t, "a", "127.0.0.1:0", testKey, func() int { return 7 })
	b := startNode(t, "b", testKey, a.Addr())
	c := startNode(t, "c", testKey, a.Addr())
	eventually(t, 3*time.Second, "three members", func() bool {
		live, known := c.Reach()
		return live == 3 && known == 3 && len(a.Members()) == 3
	})
	for _, m := range b.Members() {
		if m.Name == "a" && (m.OpenStreams != 7 || m.Version != "test") {
			t.Errorf("b sees a as %+v, want version test and 7 open streams", m)
		}
	}

	// a admits 10 of a limit of 15: b and c hear of them within two gossip
	// intervals, and c then admits the 5 left.
	lim := ratelimit.Limits{RPM: 15}
	sa := a.lim.State("key")
	for range 10 {
		if !a.lim.Admit(sa, lim, 0).Allowed {
			t.Fatal("a refused under the limit")
		}
	}
	took := eventually(t, time.Second, "b hears a's counts", func() bool {
		req, _ := b.Track("key").Others(b.lim.Now())
		return req == 10
	})
	t.Logf("b heard a's 10 admissions after %s", took)
	sc := c.lim.State("key")
	eventually(t, time.Second, "c hears a's counts", func() bool { req, _ := c.Track("key").Others(c.lim.Now()); return req == 10 })
	n := 0
	for range 20 {
		if c.lim.Admit(sc, lim, 0).Allowed {
			n++
		}
	}
	if n != 5 {
		t.Fatalf("c admitted %d, want the 5 left of 15", n)
	}

	// A node that joins now gets the fleet's counts with the join.
	eventually(t, time.Second, "b hears c's counts", func() bool { req, _ := b.Track("key").Others(b.lim.Now()); return req == 15 })
	d := startNode(t, "d", testKey, b.Addr())
	if req, _ := d.Track("key").Others(d.lim.Now()); req != 15 {
		t.Fatalf("d sees %d requests of the fleet right after joining, want 15", req)
	}

	// A key changed on b is dropped on every other node within a second.
	eventually(t, time.Second, "b knows d", func() bool { return len(b.Members()) == 4 })
	h := [32]byte{1, 2, 3}
	b.KeyChanged(h)
	b.ChannelsChanged()
	for _, o := range []*testNode{a, c, d} {
		took := eventually(t, time.Second, "invalidations reach "+o.opts.Name, func() bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			return len(o.keys) == 1 && o.keys[0] == h && o.channels == 1
		})
		t.Logf("%s dropped the key after %s", o.opts.Name, took)
	}
}

// A node that leaves is forgotten at once; one that fails stays known, so
// the others admit their share until it is back.
func TestLeaveAndFailure(t *testing.T) {
	a := startNode(t, "a", testKey)
	b := startNode(t, "b", testKey, a.Addr())
	c := startNode(t, "c", testKey, a.Addr())
	eventually(t, 3*time.Second, "three members", func() bool { l, k := a.Reach(); return l == 3 && k == 3 })

	if err := b.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "b's leave known", func() bool { l, k := a.Reach(); return l == 2 && k == 2 })

	crash(c.Node)
	eventually(t, 5*time.Second, "c's failure noticed", func() bool { l, k := a.Reach(); return l == 1 && k == 2 })
	if !strings.Contains(a.logs.String(), "node failed") {
		t.Fatalf("a did not log c's failure:\n%s", a.logs.String())
	}
	sa := a.lim.State("k")
	if n := admittedN(a.lim, sa, ratelimit.Limits{RPM: 10}, 100); n != 5 {
		t.Fatalf("a admitted %d of 10 while c is out of reach, want its share, 5", n)
	}
}

func admittedN(l *ratelimit.Limiter, s *ratelimit.State, lim ratelimit.Limits, tries int) (n int) {
	for range tries {
		if l.Admit(s, lim, 0).Allowed {
			n++
		}
	}
	return n
}

// A node with another gossip key cannot join, and says so.
func TestWrongKeyIsRefused(t *testing.T) {
	a := startNode(t, "a", testKey)
	b := startNode(t, "b", testKey, a.Addr())
	bad := startNode(t, "intruder", []byte("another key, 32 bytes long......"), a.Addr())
	time.Sleep(300 * time.Millisecond)
	if live, _ := a.Reach(); live != 2 || len(a.Members()) != 2 {
		t.Fatalf("a counts %d live nodes, %d members; want 2 (a and b)", live, len(a.Members()))
	}
	if live, _ := bad.Reach(); live != 1 {
		t.Fatalf("the intruder hears from %d nodes, want only itself", live)
	}
	if logs := bad.logs.String(); !strings.Contains(logs, "cannot join the cluster: the nodes there use another gossip key") {
		t.Fatalf("the intruder's log does not say it was refused:\n%s", logs)
	}
	if logs := a.logs.String(); !strings.Contains(logs, "a node with another gossip key") {
		t.Fatalf("a's log does not say a node with another key knocked:\n%s", logs)
	}
	_ = b
}

// Leaving stops every goroutine of the node and frees its ports.
func TestLeaveLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	a := startNode(t, "a", testKey)
	b := startNode(t, "b", testKey, a.Addr())
	eventually(t, 3*time.Second, "two members", func() bool { l, _ := a.Reach(); return l == 2 })
	b.KeyChanged([32]byte{})
	addrs := []string{a.Addr(), b.Addr()}
	b.Leave(time.Second)
	a.Leave(time.Second)
	eventually(t, 3*time.Second, "goroutines back to the start", func() bool { return runtime.NumGoroutine() <= before })
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("tcp %s still taken: %v", addr, err)
		}
		ln.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatalf("udp %s still taken: %v", addr, err)
		}
		pc.Close()
	}
}

// crash stops a node as a killed process would: no leave, no last counts.
func crash(n *Node) {
	n.left.Do(func() {
		n.stopLoops()
		n.ml.Shutdown()
	})
}

// Nodes start in any order: one whose join list names a node not up yet
// joins it once it is, by a DNS name (localhost) as well as an address.
func TestJoinInAnyOrderByName(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	early := startNode(t, "early", testKey, "localhost:"+port)
	if !strings.Contains(early.logs.String(), "cannot join the cluster: no node answered") {
		t.Errorf("the early node does not say it found no one:\n%s", early.logs.String())
	}
	late := startNodeAt(t, "late", addr, testKey)
	took := eventually(t, 4*time.Second, "the early node joins the late one", func() bool {
		l, _ := late.Reach()
		return l == 2
	})
	t.Logf("joined %s after the late node started", took)
}
