package proxy

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// An open stream needs neither of its two response headers once it runs:
// the client's is written (fasthttp writes it before it calls the relay's
// WriteTo) and the upstream's is read (startStream has passed on what it
// passes). Each header keeps its storage, though, a slice of name-value
// pairs and their bytes grown to fit (with api.openai.com's headers about
// 1.6 and 2.9 KiB), and so does the exchange its scratch buffer (the size of the
// largest answer a pooled exchange built), which a stream would hold for
// its whole length. So a stream parks them: their storage waits in a pool
// and the stream keeps them empty. A header fasthttp has just made (a new
// connection's, a new upstream answer's), or one a stream emptied, takes
// its storage from the pool (fill), as an exchange does its buffer when it
// begins: what a new stream builds takes the storage an earlier one
// parked, so open streams hold none of it, and what is built next
// allocates nothing, as before.

// spares holds the storage of values of T that open streams keep empty.
type spares[T any] struct {
	full  sync.Pool         // *T holding storage
	empty sync.Pool         // *T to carry storage in
	move  func(dst, src *T) // src's storage to dst, leaving src empty
}

// put moves v's storage into the pool, leaving v empty.
func (s *spares[T]) put(v *T) {
	c, _ := s.empty.Get().(*T)
	if c == nil {
		c = new(T)
	}
	s.move(c, v)
	s.full.Put(c)
}

// take moves storage from the pool into v, when the pool has some; what v
// holds is dropped. Without, v grows again as it is used.
func (s *spares[T]) take(v *T) {
	c, _ := s.full.Get().(*T)
	if c == nil {
		return
	}
	s.move(v, c)
	s.empty.Put(c)
}

// headerSpares holds the storage of parked response headers: one for the
// clients', one for the upstreams', whose sizes differ.
type headerSpares struct {
	spares[fasthttp.ResponseHeader]
}

var clientHeaders, upstreamHeaders = newHeaderSpares(), newHeaderSpares()

func newHeaderSpares() *headerSpares {
	return &headerSpares{spares[fasthttp.ResponseHeader]{move: moveHeader}}
}

// park empties h, whose contents are no longer needed, into the pool.
func (s *headerSpares) park(h *fasthttp.ResponseHeader) {
	h.Reset()
	s.put(h)
}

// fill gives h the storage of a parked header unless it has storage of its
// own.
func (s *headerSpares) fill(h *fasthttp.ResponseHeader) {
	if !hasStorage(h) {
		s.take(h)
	}
}

// moveHeader moves src's storage, its slices, into dst, whose own are
// dropped, and leaves src none. The other fields of both stay as they are:
// the flags the server sets on a client's header before the handler runs
// (no default Content-Type) are dst's, not those of the header the
// storage came from. (fasthttp forbids copying a header, since a copy
// shares its buffers; a move leaves nothing shared. TestMoveHeader checks
// that a header holds its storage in slices alone: no pointer, map,
// interface or array.)
func moveHeader(dst, src *fasthttp.ResponseHeader) {
	d, s := unsafe.Pointer(dst), unsafe.Pointer(src)
	for _, off := range headerSlices {
		ds, ss := (*sliceHeader)(unsafe.Add(d, off)), (*sliceHeader)(unsafe.Add(s, off))
		*ds, *ss = *ss, sliceHeader{}
	}
}

// sliceHeader is the layout every slice shares, whatever its elements.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// headerSlices are the offsets of fasthttp.ResponseHeader's slices, in it
// and in the structs it embeds.
var headerSlices = sliceOffsets(reflect.TypeFor[fasthttp.ResponseHeader](), 0)

func sliceOffsets(t reflect.Type, base uintptr) []uintptr {
	var offs []uintptr
	for i := range t.NumField() {
		switch f := t.Field(i); f.Type.Kind() {
		case reflect.Slice:
			offs = append(offs, base+f.Offset)
		case reflect.Struct:
			offs = append(offs, sliceOffsets(f.Type, base+f.Offset)...)
		}
	}
	return offs
}

// headerField is the index of fasthttp.ResponseHeader's field name, nil
// unless it has one of that kind.
func headerField(name string, kind reflect.Kind) []int {
	f, ok := reflect.TypeFor[fasthttp.ResponseHeader]().FieldByName(name)
	if !ok || f.Type.Kind() != kind {
		return nil
	}
	return f.Index
}

// hasStorage reports whether h holds name-value pairs, or has held them:
// its slice of pairs has capacity. Without a view of the pairs
// (responsePairsOf), every header is taken to have storage, and none is
// filled from the pool (TestMoveHeader fails).
func hasStorage(h *fasthttp.ResponseHeader) bool {
	ps := responsePairsOf(h)
	return ps == nil || cap(*ps) > 0
}

// writtenField is the index of the flag fasthttp sets while it writes a
// streamed body, its header written (fasthttp's written); nil if fasthttp
// has no such field, and then no client's header is parked
// (TestMoveHeader fails).
var writtenField = headerField("written", reflect.Bool)

// headerWritten reports whether h is the header of a response whose body
// fasthttp is writing, h written before it. (A body read in the process,
// by Response.Body, is read before its header is written: that header
// must not be parked.)
func headerWritten(h *fasthttp.ResponseHeader) bool {
	return writtenField != nil && reflect.ValueOf(h).Elem().FieldByIndex(writtenField).Bool()
}

// scratch holds the exchanges' scratch buffers (exchange.buf). One larger
// than maxPooledOut is not kept.
var scratch = spares[[]byte]{move: func(dst, src *[]byte) {
	*dst, *src = (*src)[:0], nil
}}

// parkBuf hands the exchange's scratch buffer to the pool: a stream has no
// more use for it.
func (x *exchange) parkBuf() {
	if cap(x.buf) > maxPooledOut {
		x.buf = nil
	}
	if x.buf != nil {
		scratch.put(&x.buf)
		x.parked = true
	}
}

// unparkBuf gives an exchange whose buffer was parked one from the pool.
// One that never had a buffer (its requests have not needed one) asks
// nothing of the pool: a whole answer relayed as it came needs none, and
// a pool with nothing in it is the costliest to ask.
func (x *exchange) unparkBuf() {
	if x.parked {
		scratch.take(&x.buf)
		x.parked = false
	}
}
