package cluster

import (
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// cuttable is a simNet transport that sends nothing, packet or stream,
// while cut is set: nodes sharing one flag are partitioned from each
// other.
type cuttable struct {
	*simTransport
	cut *atomic.Bool
}

func (c cuttable) WriteTo(b []byte, addr string) (time.Time, error) {
	if c.cut.Load() {
		return time.Now(), nil // lost
	}
	return c.simTransport.WriteTo(b, addr)
}

func (c cuttable) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	return c.WriteTo(b, a.Addr)
}

func (c cuttable) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	if c.cut.Load() {
		return nil, errors.New("partitioned")
	}
	return c.simTransport.DialTimeout(addr, timeout)
}

func (c cuttable) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return c.DialTimeout(a.Addr, timeout)
}

// A partition heals: two nodes cut apart each admit their share, and
// once they hear from each other again each counts what the other
// admitted meanwhile, at once (not at the next push/pull, seconds later),
// so the limit holds for the whole fleet again.
func TestPartitionHeals(t *testing.T) {
	network, cut := &simNet{}, &atomic.Bool{}
	const window = time.Hour // no window ends during the test
	start := func(name string, join ...string) (*Node, *ratelimit.Limiter) {
		n := New(Options{Name: name, Join: join, Window: window, Log: slog.New(slog.NewTextHandler(&testutil.Buffer{}, nil)),
			Transport: cuttable{network.transport(), cut}, configure: fastFailure})
		lim := ratelimit.New(n, window)
		if err := n.Start(lim, Handlers{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Leave(time.Second) })
		return n, lim
	}
	a, la := start("a")
	b, lb := start("b", a.Addr())
	eventually(t, 3*time.Second, "two members", func() bool { l, _ := a.Reach(); l2, _ := b.Reach(); return l == 2 && l2 == 2 })

	cut.Store(true)
	eventually(t, 5*time.Second, "each side counts the other failed", func() bool {
		l, k := a.Reach()
		l2, k2 := b.Reach()
		return l == 1 && k == 2 && l2 == 1 && k2 == 2
	})
	lim := ratelimit.Limits{RPM: 1} // 60 a one-hour window
	sa, sb := la.State("k"), lb.State("k")
	if na, nb := admittedN(la, sa, lim, 100), admittedN(lb, sb, lim, 100); na != 30 || nb != 30 {
		t.Fatalf("cut apart, a admitted %d and b %d; want each its share, 30 of 60", na, nb)
	}

	// Past the one resend of a count: what was admitted during the
	// partition is no longer on its way.
	time.Sleep(time.Duration(resendAfter+5) * DefaultGossipInterval)
	cut.Store(false)
	healed := time.Now()
	eventually(t, aloneRetry+2*time.Second, "the partition heals", func() bool { l, _ := a.Reach(); l2, _ := b.Reach(); return l == 2 && l2 == 2 })
	t.Logf("both sides live again %s after the partition ended", time.Since(healed).Round(time.Millisecond))
	took := eventually(t, 2*time.Second, "the counts merge", func() bool {
		ra, _ := a.Track("k").Others(la.Now())
		rb, _ := b.Track("k").Others(lb.Now())
		return ra == 30 && rb == 30
	})
	t.Logf("each side counted the other's admissions %s after it was live again", took.Round(time.Millisecond))
	if n := admittedN(la, sa, lim, 10) + admittedN(lb, sb, lim, 10); n != 0 {
		t.Fatalf("after the partition healed, the fleet admitted %d more of a limit of 60 already reached", n)
	}
}

// A node that leaves is no longer waited for, but what it admitted stays
// counted to the end of the window: the others admit what is left of the
// limit, not the whole of it.
func TestLeftNodesCountsStay(t *testing.T) {
	a := startNode(t, "a", testKey)
	b := startNode(t, "b", testKey, a.Addr())
	eventually(t, 3*time.Second, "two members", func() bool { l, _ := a.Reach(); return l == 2 })
	lim := ratelimit.Limits{RPM: 10}
	if n := admittedN(b.lim, b.lim.State("k"), lim, 4); n != 4 {
		t.Fatalf("b admitted %d of 4 under a limit of 10", n)
	}
	if err := b.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "b's leave known", func() bool { l, k := a.Reach(); return l == 1 && k == 1 })
	if n := admittedN(a.lim, a.lim.State("k"), lim, 100); n != 6 {
		t.Fatalf("after b left, a admitted %d; want the 6 left of 10 (b's 4 count to the window's end)", n)
	}
}

// cluster.advertise is the address the others reach a node at: a node
// bound to every interface and advertising loopback is listed there, and
// joined there.
func TestAdvertise(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	advertised := "127.0.0.1:" + port
	tn := &testNode{logs: &testutil.Buffer{}}
	tn.Node = New(Options{Name: "a", Bind: "0.0.0.0:" + port, Advertise: advertised, SecretKey: testKey,
		Window: time.Minute, Log: slog.New(slog.NewTextHandler(tn.logs, nil)), configure: fastFailure})
	if err := tn.Start(ratelimit.New(tn.Node, time.Minute), Handlers{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tn.Leave(time.Second) })
	if got := tn.Addr(); got != advertised {
		t.Fatalf("a bound to 0.0.0.0 gives its address as %s, want the advertised %s", got, advertised)
	}
	b := startNode(t, "b", testKey, advertised)
	eventually(t, 3*time.Second, "b joins a at the advertised address", func() bool {
		for _, m := range b.Members() {
			if m.Name == "a" {
				return m.Addr == advertised
			}
		}
		return false
	})
}
