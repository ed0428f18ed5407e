package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
)

// delegate is the node as memberlist's Delegate: the messages it receives
// and the state it exchanges in push/pull.
type delegate struct{ n *Node }

// NodeMeta is this node's version and open streams, "v1.2\x0012", shown
// by the others' Members.
func (d delegate) NodeMeta(limit int) []byte {
	b := append([]byte(d.n.opts.Version), 0)
	b = strconv.AppendInt(b, d.n.open.Load(), 10)
	if len(b) > limit {
		return b[:0]
	}
	return b
}

// parseMeta reads NodeMeta's version and open streams.
func parseMeta(meta []byte) (version string, open int) {
	v, streams, _ := bytes.Cut(meta, []byte{0})
	open, _ = strconv.Atoi(string(streams))
	return string(v), open
}

// NotifyMsg handles a message of another node. It runs on memberlist's
// receive loop and returns quickly: a channel reload runs elsewhere.
func (d delegate) NotifyMsg(b []byte) {
	n := d.n
	if len(b) == 0 {
		return
	}
	n.stats.received(len(b))
	switch b[0] {
	case msgCounts:
		n.report(n.counts.apply(b))
	case msgKey:
		if len(b) == 33 && n.handlers.KeyChanged != nil {
			n.handlers.KeyChanged([32]byte(b[1:]))
		}
	case msgLeave:
		n.mu.Lock()
		n.leaving[string(b[1:])] = true
		delete(n.peers, string(b[1:]))
		n.mu.Unlock()
		n.updateReach()
	case msgChannels:
		select {
		case n.reload <- struct{}{}:
		default: // a reload is pending already
		}
	}
}

// GetBroadcasts returns nothing: counts go to every node directly
// (README.md says why).
func (delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }

// LocalState is this node's counts, and when a node joins, every other
// node's counts too, so that its first admissions see the fleet's.
func (d delegate) LocalState(join bool) []byte {
	n := d.n
	state := []byte{msgState}
	add := func(b []byte) {
		state = binary.AppendUvarint(state, uint64(len(b)))
		state = append(state, b...)
	}
	w := n.counts.window()
	if n.local != nil {
		p := n.packer(0, add)
		n.local.Each(w, func(_ string, sh ratelimit.Shared, win, req, tok int64) {
			if c, ok := sh.(*counter); ok {
				p.add(win, c.id, req, tok)
			}
		})
		p.end()
	}
	if join {
		var p *packer
		n.counts.eachSource(w, func(src uint64, node string, win int64, id uint64, req, tok int64) {
			if p == nil || p.src != src {
				if p != nil {
					p.end()
				}
				p = &packer{windowMs: n.opts.Window.Milliseconds(), src: src, node: node, out: add}
			}
			p.add(win, id, req, tok)
		})
		if p != nil {
			p.end()
		}
	}
	n.stats.sent(len(state))
	return state
}

// MergeRemoteState merges the counts of another node's state.
func (d delegate) MergeRemoteState(b []byte, join bool) {
	n := d.n
	n.stats.received(len(b))
	n.report(decodeState(b, n.counts.apply))
}

// report logs a message that could not be read; a window length that
// differs from this node's, once.
func (n *Node) report(err error) {
	switch {
	case err == nil:
	case errors.Is(err, errWindow):
		if n.warned.CompareAndSwap(false, true) {
			n.log.Error("counts of a node with another cluster.window ignored: set the same on every node", "err", err)
		}
	default:
		n.log.Warn("cannot read a gossip message", "err", err)
	}
}

// events is the node as memberlist's EventDelegate: who is alive.
type events struct{ n *Node }

func (e events) NotifyJoin(m *memberlist.Node)   { e.set(m, peer{alive: true}) }
func (e events) NotifyUpdate(m *memberlist.Node) { e.set(m, peer{alive: true}) }

// NotifyLeave forgets a node that said it leaves; one that failed stays
// known for failedWindows windows, as it may only be out of reach.
// (memberlist's Node.State does not tell the two apart: msgLeave does.)
func (e events) NotifyLeave(m *memberlist.Node) {
	n := e.n
	n.mu.Lock()
	left := n.leaving[m.Name]
	n.mu.Unlock()
	if left {
		n.log.Info("node left the cluster", "node", m.Name)
		e.set(m, peer{})
		return
	}
	n.log.Warn("node failed: admitting this group's share of the limits until it is back or forgotten",
		"node", m.Name, "forgotten_after", failedWindows*n.opts.Window)
	e.set(m, peer{failed: time.Now(), addr: m.Address()})
}

func (e events) set(m *memberlist.Node, p peer) {
	n := e.n
	if m.Name == n.opts.Name {
		return
	}
	n.mu.Lock()
	if p.alive {
		delete(n.leaving, m.Name) // back
	}
	if p == (peer{}) {
		delete(n.peers, m.Name)
		delete(n.leaving, m.Name) // its leave is read: names of gone nodes do not pile up
	} else {
		if old, ok := n.peers[m.Name]; (!ok || !old.alive) && p.alive {
			n.log.Info("node joined the cluster", "node", m.Name, "addr", m.Address())
			// Back from a partition, it missed the counts that changed
			// meanwhile (sent once, and lost): send them all.
			n.resendAll.Store(true)
		}
		n.peers[m.Name] = p
	}
	n.mu.Unlock()
	n.updateReach()
}

// errDecrypt is how memberlist says a message was sealed with another key.
const errDecrypt = "no installed keys could decrypt"

// logWriter takes memberlist's log lines ("[ERR] memberlist: ...") to
// slog, at their level; its debug lines are dropped.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimSpace(p))
	level := slog.LevelInfo
	for prefix, l := range map[string]slog.Level{"[DEBUG]": slog.LevelDebug - 1, "[WARN]": slog.LevelWarn, "[ERR]": slog.LevelError, "[INFO]": slog.LevelInfo} {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			line, level = rest, l
			break
		}
	}
	if level < slog.LevelDebug {
		return len(p), nil
	}
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "memberlist:"))
	if strings.Contains(line, errDecrypt) {
		line = "a node with another gossip key tried to talk to this one, and was refused: " + line
	}
	w.log.Log(context.Background(), level, line, "component", "memberlist")
	return len(p), nil
}
