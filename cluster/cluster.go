// Package cluster joins the gateway's nodes into a fleet with
// hashicorp/memberlist: membership, the rate-limit counters every node
// shares with the others, and the broadcasts that drop a changed key or
// channel list from every node's caches. It knows nothing of HTTP; the
// gateway reaches it through ratelimit.Fleet and a few methods.
//
// See README.md for the design: how counts travel, the overshoot bound,
// what a partition does, and what gossip costs.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
)

// Defaults of Options.
const (
	// DefaultGossipInterval is how often a node sends the counts that
	// changed to every other node; it bounds how late a node learns of
	// another's admissions (README.md: the overshoot bound).
	DefaultGossipInterval = 100 * time.Millisecond
	// resolveEvery is how often the join list's DNS names are resolved
	// again, to join nodes that appeared behind them (a headless service).
	resolveEvery = 30 * time.Second
	// aloneRetry is how often a node that found no one joins again, and
	// tries to reach the nodes it knows that failed (a partition heals
	// once one side reaches the other).
	aloneRetry = 2 * time.Second
	// resendAfter: a count is sent again this many flushes after it
	// changed, if it has not changed since, so that one lost packet is
	// repaired within a second (a later change repairs it sooner: counts
	// travel as values).
	resendAfter = 10
	// sweepEvery is how many flushes apart the counts of windows over are
	// forgotten.
	sweepEvery = 10
	// pushPullEvery is memberlist's full state exchange with one random
	// node: this node's counts and membership.
	pushPullEvery = 10 * time.Second
	// failedWindows is how many windows a node that failed without
	// leaving stays known: this node admits its share meanwhile.
	failedWindows = 3
)

// Options configure a node.
type Options struct {
	// Name is unique in the fleet (cluster.node_name).
	Name string
	// Bind is the host:port gossip listens on, UDP and TCP.
	Bind string
	// Advertise is the host:port others reach this node at; "" for Bind
	// (memberlist picks a private address when Bind's host is 0.0.0.0).
	Advertise string
	// Join lists nodes to join: host:port, or a DNS name (every address
	// it resolves to), with Bind's port when none is given.
	Join []string
	// SecretKey encrypts and authenticates gossip (16, 24 or 32 bytes);
	// nil sends it in clear (tests only: serve requires a key).
	SecretKey []byte
	// Window is the length of the limiter's windows, the same on every
	// node (a node's counts of another length are refused).
	Window time.Duration
	// Version is this node's build, shown to the others.
	Version string
	// Log receives membership changes and gossip failures.
	Log *slog.Logger
	// GossipInterval overrides DefaultGossipInterval.
	GossipInterval time.Duration
	// Transport, when set, replaces the network (memberlist's
	// MockNetwork in tests); Bind and Advertise are then unused.
	Transport memberlist.Transport
	// configure, when set, adjusts memberlist's configuration (tests).
	configure func(*memberlist.Config)
}

// Local is this node's limiter (ratelimit.Limiter): its own counts, to
// gossip.
type Local interface {
	Now() int64
	Each(w int64, fn func(key string, shared ratelimit.Shared, window, requests, tokens int64))
}

// Handlers are what the node calls when another node broadcasts a
// change. They run on memberlist's receive path (ChannelsChanged on a
// goroutine of its own): KeyChanged must not block.
type Handlers struct {
	KeyChanged      func(hash [32]byte)
	ChannelsChanged func()
	// OpenStreams, when set, reports this node's open streams, which the
	// others show in their Members (sent every few seconds when it
	// changed).
	OpenStreams func() int
}

// Node is this gateway in the fleet. It is a ratelimit.Fleet.
type Node struct {
	opts     Options
	log      *slog.Logger
	counts   *counters
	self     uint64 // this run's source id
	ml       *memberlist.Memberlist
	local    Local
	handlers Handlers

	reach atomic.Uint64 // live<<32 | known
	mu    sync.Mutex
	peers map[string]peer // other nodes by name
	// leaving holds the nodes that said they leave: memberlist reports
	// a leave and a failure alike.
	leaving map[string]bool
	stats   Stats
	warned  atomic.Bool  // another window length was reported
	open    atomic.Int64 // open streams, as the metadata last sent says

	flushes int // flushes so far; used by the gossip loop only
	// resendAll asks the gossip loop to send all of this node's counts at
	// its next flush: a node is back, which missed what changed meanwhile.
	resendAll atomic.Bool
	stop      chan struct{}
	reload    chan struct{}
	wg        sync.WaitGroup
	left      sync.Once
	// sending guards wg.Add of a broadcast against Leave's Wait.
	sending sync.Mutex
	stopped bool // under sending
}

// peer is another node as membership reports it.
type peer struct {
	alive  bool
	failed time.Time // when it was declared dead (not alive)
	addr   string    // where it was when it failed, to reach it again
}

var _ ratelimit.Fleet = (*Node)(nil)

// New makes a node that counts but has not joined: the limiter can be
// built on it before Start.
func New(opts Options) *Node {
	if opts.GossipInterval <= 0 {
		opts.GossipInterval = DefaultGossipInterval
	}
	if opts.Window <= 0 {
		opts.Window = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	var id [8]byte
	rand.Read(id[:]) //nolint:errcheck // crypto/rand never fails on Linux
	n := &Node{opts: opts, log: opts.Log.With("component", "cluster"), self: binary.LittleEndian.Uint64(id[:]),
		peers: map[string]peer{}, leaving: map[string]bool{}, stop: make(chan struct{}), reload: make(chan struct{}, 1)}
	n.counts = newCounters(n.self, opts.Window, time.Now)
	n.reach.Store(1<<32 | 1)
	return n
}

// Track returns the other nodes' counts of the limit named key.
func (n *Node) Track(key string) ratelimit.Shared { return n.counts.track(limitID(key)) }

// Reach reports the nodes this one hears from, itself included, and the
// nodes it knows: those and the ones that failed in the last
// failedWindows windows without leaving.
func (n *Node) Reach() (live, known int) {
	v := n.reach.Load()
	return int(v >> 32), int(uint32(v))
}

// Start joins the fleet: it listens on Bind, joins the nodes of Join
// (their counts arrive with the join), and gossips local's counts from then
// on. A node that cannot join anyone serves alone and keeps trying.
func (n *Node) Start(local Local, h Handlers) error {
	n.local, n.handlers = local, h
	if h.OpenStreams != nil {
		n.open.Store(int64(h.OpenStreams())) // in the metadata the join sends
	}
	c, err := n.memberlistConfig()
	if err != nil {
		return err
	}
	if n.ml, err = memberlist.Create(c); err != nil {
		return fmt.Errorf("cannot start gossip on %s: %w", n.opts.Bind, err)
	}
	n.log.Info("gossip started", "node", n.opts.Name, "bind", n.opts.Bind, "encrypted", len(n.opts.SecretKey) > 0)
	n.joinSome()
	n.wg.Add(4)
	go n.gossipLoop()
	go n.joinLoop()
	go n.reloadLoop()
	go n.metaLoop()
	return nil
}

func (n *Node) memberlistConfig() (*memberlist.Config, error) {
	c := memberlist.DefaultLANConfig()
	c.Name = n.opts.Name
	c.Delegate, c.Events = delegate{n}, events{n}
	c.Logger = log.New(logWriter{n.opts.Log}, "", 0)
	c.SecretKey = n.opts.SecretKey
	c.EnableCompression = false // counts are hashes and small numbers: they do not compress
	c.PushPullInterval = pushPullEvery
	if n.opts.Transport != nil {
		c.Transport = n.opts.Transport
	} else {
		host, port, err := splitHostPort(n.opts.Bind)
		if err != nil {
			return nil, fmt.Errorf("cluster.bind: %w", err)
		}
		c.BindAddr, c.BindPort, c.AdvertisePort = host, port, port
		if n.opts.Advertise != "" {
			if c.AdvertiseAddr, c.AdvertisePort, err = splitHostPort(n.opts.Advertise); err != nil {
				return nil, fmt.Errorf("cluster.advertise: %w", err)
			}
		}
	}
	if n.opts.configure != nil {
		n.opts.configure(c)
	}
	return c, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	return host, port, err
}

// Leave tells the others this node is going (they stop reserving its
// share at once), sends its last counts first, and stops every goroutine
// and socket of the node. Call it once requests in flight are done.
func (n *Node) Leave(timeout time.Duration) error {
	var err error
	n.left.Do(func() {
		n.stopLoops()
		if n.ml == nil {
			return
		}
		n.flush(true)
		n.sendAll(append([]byte{msgLeave}, n.opts.Name...))
		if lerr := n.ml.Leave(timeout); lerr != nil {
			err = fmt.Errorf("cannot announce the leave: %w", lerr)
		}
		err = errors.Join(err, n.ml.Shutdown())
		n.log.Info("left the cluster", "node", n.opts.Name)
	})
	return err
}

// stopLoops stops the node's goroutines and waits for them, broadcasts
// in flight included.
func (n *Node) stopLoops() {
	n.sending.Lock()
	n.stopped = true
	n.sending.Unlock()
	close(n.stop)
	n.wg.Wait()
}

// KeyChanged tells every other node to drop the key with this hash from
// its caches (revoked, edited, deleted).
func (n *Node) KeyChanged(hash [32]byte) { n.broadcast(append([]byte{msgKey}, hash[:]...)) }

// ChannelsChanged tells every other node to reload the store's channels.
func (n *Node) ChannelsChanged() { n.broadcast([]byte{msgChannels}) }

// broadcast sends msg to every other live node over TCP, in the
// background: the store poll of each node is the fallback for one it
// misses.
func (n *Node) broadcast(msg []byte) {
	n.sending.Lock()
	defer n.sending.Unlock()
	if n.ml == nil || n.stopped {
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.sendAll(msg)
	}()
}

// sendAll sends msg to every other live node over TCP, one after the
// other.
func (n *Node) sendAll(msg []byte) {
	for _, m := range n.others() {
		if err := n.ml.SendReliable(m, msg); err != nil {
			n.log.Warn("cannot send a message to a node", "to", m.Name, "err", err)
			continue
		}
		n.stats.sent(len(msg))
	}
}

// others lists the live nodes but this one.
func (n *Node) others() []*memberlist.Node {
	all := n.ml.Members()
	out := all[:0]
	for _, m := range all {
		if m.Name != n.opts.Name {
			out = append(out, m)
		}
	}
	return out
}

// gossipLoop sends the counts that changed every GossipInterval, keeps
// Reach current, and forgets counts of windows over.
func (n *Node) gossipLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.opts.GossipInterval)
	defer t.Stop()
	for i := 1; ; i++ {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		n.flush(n.resendAll.Swap(false))
		n.updateReach()
		if i%sweepEvery == 0 {
			n.counts.sweep()
		}
	}
}

// flush sends this node's counts to every other node: those that changed
// since the last flush, those that changed resendAfter flushes ago and not
// since, or all of them.
func (n *Node) flush(all bool) {
	n.flushes++
	var packets [][]byte
	p := n.packer(maxPacket, func(b []byte) { packets = append(packets, append([]byte(nil), b...)) })
	n.local.Each(n.local.Now(), func(_ string, sh ratelimit.Shared, w, req, tok int64) {
		c, ok := sh.(*counter)
		if !ok {
			return
		}
		sent := &c.sent[w&1]
		switch {
		case all || sent.entry != (entry{w, req, tok}):
			sent.entry, sent.again = entry{w, req, tok}, n.flushes+resendAfter
		case sent.again == n.flushes:
			sent.again = 0
		default:
			return
		}
		p.add(w, c.id, req, tok)
	})
	p.end()
	if len(packets) == 0 {
		return
	}
	for _, m := range n.others() {
		for _, b := range packets {
			if err := n.ml.SendBestEffort(m, b); err == nil {
				n.stats.sent(len(b))
			}
		}
	}
}

func (n *Node) packer(limit int, out func([]byte)) *packer {
	return &packer{windowMs: n.opts.Window.Milliseconds(), src: n.self, node: n.opts.Name, limit: limit, out: out}
}

// joinSome joins the nodes of the join list that are not members yet,
// resolving DNS names again.
func (n *Node) joinSome() {
	if len(n.opts.Join) == 0 {
		return
	}
	addrs := n.resolve()
	if len(addrs) == 0 {
		return
	}
	joined, err := n.ml.Join(addrs)
	switch {
	case joined > 0:
	case err != nil && strings.Contains(err.Error(), errDecrypt):
		n.log.Error("cannot join the cluster: the nodes there use another gossip key (the variable cluster.secret_key_env names)",
			"join", addrs, "err", err)
		return
	case err != nil:
		n.log.Error("cannot join the cluster: no node answered", "join", addrs, "err", err)
		return
	}
	if joined > 0 {
		n.log.Info("joined the cluster", "contacted", joined, "members", n.ml.NumMembers())
	}
}

// resolve lists the join list's addresses that are not members: DNS names
// are resolved to every address behind them.
func (n *Node) resolve() []string {
	_, bindPort, _ := splitHostPort(n.opts.Bind)
	known := map[string]bool{}
	for _, m := range n.ml.Members() {
		known[m.Address()] = true
	}
	var out []string
	for _, j := range n.opts.Join {
		host, port, err := net.SplitHostPort(j)
		if err != nil {
			host, port = j, strconv.Itoa(bindPort)
		}
		ips := []string{host}
		if net.ParseIP(host) == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			ips, err = net.DefaultResolver.LookupHost(ctx, host)
			cancel()
			if err != nil {
				n.log.Warn("cannot resolve a join address", "join", j, "err", err)
				continue
			}
		}
		for _, ip := range ips {
			if a := net.JoinHostPort(ip, port); !known[a] {
				out = append(out, a)
			}
		}
	}
	return out
}

// joinLoop joins again every aloneRetry while this node is alone, and
// every resolveEvery whatever the join list's names resolve to that is not
// a member; every aloneRetry, it joins the nodes it knows that failed.
// memberlist alone never tries a dead node again, so without that the two
// sides of a partition stayed apart until a join list was resolved again.
func (n *Node) joinLoop() {
	defer n.wg.Done()
	t := time.NewTicker(aloneRetry)
	defer t.Stop()
	resolved := time.Now()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		n.rejoinFailed()
		if n.ml.NumMembers() <= 1 || time.Since(resolved) >= resolveEvery {
			resolved = time.Now()
			n.joinSome()
		}
	}
}

// rejoinFailed joins the nodes known to have failed, at the addresses
// they had. Joined, they learn they were declared dead and refute it: both
// sides are live again. One that is really gone costs a refused dial.
func (n *Node) rejoinFailed() {
	var addrs []string
	n.mu.Lock()
	for _, p := range n.peers {
		if !p.alive && p.addr != "" {
			addrs = append(addrs, p.addr)
		}
	}
	n.mu.Unlock()
	if len(addrs) == 0 {
		return
	}
	if joined, _ := n.ml.Join(addrs); joined > 0 {
		n.log.Info("reached nodes that had failed again", "contacted", joined)
	}
}

// reloadLoop runs ChannelsChanged for the broadcasts received, one at a
// time; broadcasts that arrive meanwhile make one more reload.
func (n *Node) reloadLoop() {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		case <-n.reload:
			if n.handlers.ChannelsChanged != nil {
				n.handlers.ChannelsChanged()
			}
		}
	}
}

// metaEvery is how often a node's open streams are checked, and sent to
// the others when they changed.
const metaEvery = 2 * time.Second

// metaLoop keeps this node's metadata (its version and open streams)
// current on the other nodes. memberlist's update waits for its broadcast,
// so it runs apart from the counts' loop.
func (n *Node) metaLoop() {
	defer n.wg.Done()
	if n.handlers.OpenStreams == nil {
		return
	}
	t := time.NewTicker(metaEvery)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if open := int64(n.handlers.OpenStreams()); open != n.open.Swap(open) {
			if err := n.ml.UpdateNode(metaEvery); err != nil {
				n.log.Warn("cannot send this node's open streams", "err", err)
			}
		}
	}
}

// updateReach counts the live and known nodes into reach.
func (n *Node) updateReach() {
	forget := time.Now().Add(-failedWindows * n.opts.Window)
	n.mu.Lock()
	live, known := 1, 1
	for name, p := range n.peers {
		switch {
		case p.alive:
			live++
			known++
		case p.failed.After(forget):
			known++
		default:
			delete(n.peers, name)
		}
	}
	n.mu.Unlock()
	n.reach.Store(uint64(live)<<32 | uint64(known))
}

// Member is a node of the fleet as this node sees it.
type Member struct {
	Name        string
	Addr        string
	Version     string
	OpenStreams int
	// Lag is the age of the newest count heard from the node; -1 when
	// none was (it admitted nothing lately), 0 for this node.
	Lag time.Duration
}

// Members lists the live nodes, this one first.
func (n *Node) Members() []Member {
	if n.ml == nil {
		return nil
	}
	heard, now := n.counts.heard(), time.Now()
	var out []Member
	for _, m := range n.ml.Members() {
		version, open := parseMeta(m.Meta)
		mem := Member{Name: m.Name, Addr: m.Address(), Version: version, OpenStreams: open, Lag: -1}
		if at, ok := heard[m.Name]; ok {
			mem.Lag = now.Sub(at)
		}
		if m.Name == n.opts.Name {
			mem.Lag = 0
			if n.handlers.OpenStreams != nil {
				mem.OpenStreams = n.handlers.OpenStreams()
			}
			out = append([]Member{mem}, out...)
			continue
		}
		out = append(out, mem)
	}
	return out
}

// Name is the node's name in the fleet.
func (n *Node) Name() string { return n.opts.Name }

// Addr is the address other nodes reach this one at ("" before Start).
func (n *Node) Addr() string {
	if n.ml == nil {
		return ""
	}
	return n.ml.LocalNode().Address()
}

// Health is memberlist's view of its own timeliness: 0 is healthy, more
// means missed probes (memberlist's awareness score).
func (n *Node) Health() int {
	if n.ml == nil {
		return 0
	}
	return n.ml.GetHealthScore()
}

// Stats counts the gossip this node sent and received (its own messages:
// counts, states and invalidations, not memberlist's probes).
type Stats struct {
	SentBytes, SentMessages, ReceivedBytes, ReceivedMessages atomic.Int64
}

func (s *Stats) sent(n int) { s.SentBytes.Add(int64(n)); s.SentMessages.Add(1) }

func (s *Stats) received(n int) { s.ReceivedBytes.Add(int64(n)); s.ReceivedMessages.Add(1) }

// Stats returns the node's gossip counters.
func (n *Node) Stats() *Stats { return &n.stats }
