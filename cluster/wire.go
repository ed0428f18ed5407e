package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Messages between nodes. Each starts with its type byte:
//
//	counts    'c' uvarint(window ms) u64(source) uvarint(len) node
//	              varint(window) u16(n) n × [u64(limit id) uvarint(requests) uvarint(tokens)]
//	state     's' then counts messages, each after its uvarint length
//	key       'k' the 32-byte SHA-256 hash of a key that changed
//	channels  'h' the store's channels changed
//	leave     'l' the name of the node that sends it: it leaves now
//
// Counts are values, not increments: a message applied twice, late or out
// of order changes nothing (they merge by max).
const (
	msgCounts   byte = 'c'
	msgState    byte = 's'
	msgKey      byte = 'k'
	msgChannels byte = 'h'
	msgLeave    byte = 'l'
)

// maxPacket bounds a counts message sent by UDP, below a LAN's MTU with
// memberlist's framing and encryption added.
const maxPacket = 1200

// maxCount bounds a count read from the wire, so that the sums of many
// sources cannot overflow (2^40 requests or tokens a window is far beyond
// any limit).
const maxCount = 1 << 40

// maxEntry is the largest encoding of one limit's counts.
const maxEntry = 8 + 2*binary.MaxVarintLen64

// packer writes the counts of one source into messages of at most limit
// bytes (any size when 0), one window each, handed to out; out must not
// keep the slice. Counts of the two windows a node gossips may come mixed:
// each window's message stays open until it is full or the packer ends.
type packer struct {
	windowMs int64
	src      uint64
	node     string
	limit    int
	out      func([]byte)
	open     [2]message // by window parity
}

// message is one counts message being written.
type message struct {
	buf    []byte
	window int64
	n      int // entries, whose count sits at buf[nAt:]
	nAt    int
}

// add writes one limit's counts in window w.
func (p *packer) add(w int64, id uint64, req, tok int64) {
	m := &p.open[w&1]
	if m.buf != nil && (m.window != w || m.n == 0xffff || (p.limit > 0 && len(m.buf)+maxEntry > p.limit)) {
		p.flush(m)
	}
	if m.buf == nil {
		p.begin(m, w)
	}
	m.buf = binary.LittleEndian.AppendUint64(m.buf, id)
	m.buf = binary.AppendUvarint(m.buf, uint64(req))
	m.buf = binary.AppendUvarint(m.buf, uint64(tok))
	m.n++
}

// begin starts m as a message of window w's counts.
func (p *packer) begin(m *message, w int64) {
	b := append(m.buf[:0], msgCounts)
	b = binary.AppendUvarint(b, uint64(p.windowMs))
	b = binary.LittleEndian.AppendUint64(b, p.src)
	b = binary.AppendUvarint(b, uint64(len(p.node)))
	b = append(b, p.node...)
	b = binary.AppendVarint(b, w)
	*m = message{buf: append(b, 0, 0), window: w, nAt: len(b)}
}

// flush hands m to out and leaves it empty.
func (p *packer) flush(m *message) {
	binary.LittleEndian.PutUint16(m.buf[m.nAt:], uint16(m.n))
	p.out(m.buf)
	m.buf = nil
}

// end hands the messages still open to out.
func (p *packer) end() {
	for i := range p.open {
		if p.open[i].buf != nil {
			p.flush(&p.open[i])
		}
	}
}

var (
	errShort  = errors.New("truncated message")
	errWindow = errors.New("another window length")
)

// decodeCounts calls fn with each count of a counts message. A message of
// nodes whose windows have another length than windowMs is refused whole.
// node is only valid during the call.
func decodeCounts(b []byte, windowMs int64, fn func(src uint64, node []byte, w int64, id uint64, req, tok int64)) error {
	if len(b) == 0 || b[0] != msgCounts {
		return errors.New("not a counts message")
	}
	r := reader{b: b[1:]}
	if ms := r.uvarint(); r.err == nil && int64(ms) != windowMs {
		return fmt.Errorf("%w: %dms, here %dms", errWindow, ms, windowMs)
	}
	src := r.u64()
	node := r.bytes(int(r.uvarint()))
	w := r.varint()
	n := int(r.u16())
	for range n {
		id, req, tok := r.u64(), r.uvarint(), r.uvarint()
		if r.err != nil {
			break
		}
		fn(src, node, w, id, int64(min(req, maxCount)), int64(min(tok, maxCount)))
	}
	if r.err == nil && len(r.b) > 0 {
		return errors.New("trailing bytes after the counts")
	}
	return r.err
}

// decodeState calls apply with each counts message of a state.
func decodeState(b []byte, apply func(msg []byte) error) error {
	if len(b) == 0 || b[0] != msgState {
		return errors.New("not a state message")
	}
	r := reader{b: b[1:]}
	for len(r.b) > 0 && r.err == nil {
		msg := r.bytes(int(r.uvarint()))
		if r.err == nil {
			if err := apply(msg); err != nil {
				return err
			}
		}
	}
	return r.err
}

// reader reads a message; its first failure sticks in err, and every read
// after it returns zero.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte { return r.take(n) }

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (r *reader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (r *reader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *reader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads a varint with decode (binary.Uvarint or Varint).
func readVarint[T uint64 | int64](r *reader, decode func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := decode(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}
