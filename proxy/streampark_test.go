package proxy

import (
	"bufio"
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestMoveHeader: a move of a fasthttp response header leaves nothing
// shared between the two, which holds while a header is made of slices and
// scalars alone: a pointer, map, interface or array could be shared by a
// move, or point into the header it was moved from. The header moved to
// writes what the other did; the other is empty, and what is set on it
// next is its own.
func TestMoveHeader(t *testing.T) {
	checkMovable(t, reflect.TypeFor[fasthttp.ResponseHeader](), "ResponseHeader")
	if responsePairsOf(&fasthttp.ResponseHeader{}) == nil {
		t.Error("fasthttp.ResponseHeader has no slice h of name-value pairs laid out as headerPair: no header is filled from the pool")
	}
	if writtenField == nil {
		t.Error("fasthttp.ResponseHeader has no flag written: no client's header is parked")
	}

	var src, dst fasthttp.ResponseHeader
	src.SetStatusCode(200)
	src.SetContentType("text/event-stream")
	src.Set("X-Request-Id", "req_1")
	src.Set("Openai-Processing-Ms", "12")
	want := string(src.Header())
	if !hasStorage(&src) || hasStorage(&dst) {
		t.Fatalf("hasStorage: %t for a header with pairs, %t for a new one", hasStorage(&src), hasStorage(&dst))
	}
	moveHeader(&dst, &src)
	if got := string(dst.Header()); got != want {
		t.Fatalf("moved header writes\n%q\nwant\n%q", got, want)
	}
	if hasStorage(&src) || !isEmpty(&src) {
		t.Fatalf("the header moved from keeps storage (%t) or pairs:\n%s", hasStorage(&src), src.Header())
	}
	src.Set("X-Request-Id", "req_2")
	if got := string(dst.Header()); got != want {
		t.Fatalf("a header set after the move changed the one moved to:\n%q", got)
	}
}

// isEmpty reports whether h writes what a new header does.
func isEmpty(h *fasthttp.ResponseHeader) bool {
	var zero fasthttp.ResponseHeader
	return bytes.Equal(h.Header(), zero.Header())
}

// checkMovable fails for a field of ty (a struct) that a move could share.
func checkMovable(t *testing.T, ty reflect.Type, path string) {
	for i := range ty.NumField() {
		f := ty.Field(i)
		switch k := f.Type.Kind(); k {
		case reflect.Struct:
			checkMovable(t, f.Type, path+"."+f.Name)
		case reflect.Slice, reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			t.Errorf("%s.%s is a %s: a move of the header may share it", path, f.Name, k)
		}
	}
}

// TestParkedHeaderFillsAnother: a parked header's storage, reset, goes to
// the next header that has none; one with storage of its own keeps it.
func TestParkedHeaderFillsAnother(t *testing.T) {
	s := newHeaderSpares()
	var parked, fresh, own fasthttp.ResponseHeader
	own.Set("X-Own", "1")
	// sync.Pool may drop what it is given (it does so at random under
	// -race): try a few times.
	filled := false
	for range 20 {
		parked.Set("X-Request-Id", "req_1")
		s.park(&parked)
		if hasStorage(&parked) || !isEmpty(&parked) {
			t.Fatalf("a parked header keeps storage (%t) or pairs:\n%s", hasStorage(&parked), parked.Header())
		}
		s.fill(&fresh)
		if filled = hasStorage(&fresh); filled {
			break
		}
	}
	if !filled {
		t.Fatal("no new header was given a parked header's storage")
	}
	if !isEmpty(&fresh) {
		t.Fatalf("a filled header holds what the parked one held:\n%s", fresh.Header())
	}
	s.park(&fresh)
	s.fill(&own)
	if string(own.Peek("X-Own")) != "1" {
		t.Fatalf("a header with storage of its own was filled: %q", own.Header())
	}
}

// TestParkedScratchGoesToTheNextExchange: a stream hands its exchange's
// scratch buffer to the pool, and an exchange whose buffer was parked
// takes one when it begins again; one that never had a buffer asks
// nothing of the pool; a buffer over maxPooledOut is not kept.
func TestParkedScratchGoesToTheNextExchange(t *testing.T) {
	taken := false
	for range 20 { // sync.Pool may drop what it is given
		x := &exchange{buf: make([]byte, 10, 8<<10)}
		x.parkBuf()
		if x.buf != nil {
			t.Fatalf("a stream's exchange keeps its %d-byte buffer", cap(x.buf))
		}
		var fresh exchange
		fresh.unparkBuf()
		if fresh.buf != nil {
			t.Fatal("an exchange that never had a buffer took one from the pool")
		}
		y := exchange{parked: true}
		y.unparkBuf()
		if y.parked {
			t.Fatal("the exchange still counts its buffer parked")
		}
		if taken = cap(y.buf) == 8<<10; taken {
			if len(y.buf) != 0 {
				t.Fatalf("the buffer taken holds %d bytes", len(y.buf))
			}
			scratch.put(&y.buf) // not to be taken below
			break
		}
	}
	if !taken {
		t.Fatal("no exchange was given a parked buffer")
	}
	big := &exchange{buf: make([]byte, 0, 2*maxPooledOut)}
	big.parkBuf()
	for range 3 {
		y := exchange{parked: true}
		y.unparkBuf()
		if cap(y.buf) > maxPooledOut {
			t.Fatalf("a %d-byte buffer was pooled", cap(y.buf))
		}
	}
}

// TestHeaderWritten: a response's header reads as written while fasthttp
// writes its streamed body, after the header, and not while the body is
// read in the process (Response.Body), before it: the header a relay
// parks is one fasthttp has written.
func TestHeaderWritten(t *testing.T) {
	var resp fasthttp.Response
	resp.Header.Set("X-Request-Id", "req_1")
	probe := &headerProbe{h: &resp.Header}
	resp.SetBodyStream(probe, -1)
	resp.Body()
	if probe.calls != 1 || probe.written {
		t.Fatalf("Response.Body: %d WriteTo calls, header written %t; want 1, false", probe.calls, probe.written)
	}
	resp.SetBodyStream(probe, -1)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := resp.Write(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if probe.calls != 2 || !probe.written || !bytes.Contains(out.Bytes(), []byte("req_1")) {
		t.Fatalf("Response.Write: %d WriteTo calls, header written %t; want 2, true:\n%s", probe.calls, probe.written, out.Bytes())
	}
	if headerWritten(&resp.Header) {
		t.Error("the header reads as written once the body is")
	}
}

// headerProbe is a streamed body that notes whether its header reads as
// written when fasthttp asks it for the body.
type headerProbe struct {
	h       *fasthttp.ResponseHeader
	calls   int
	written bool
}

func (p *headerProbe) SupportsBodyWriteTo() bool { return true }

func (p *headerProbe) WriteTo(w io.Writer) (int64, error) {
	p.calls++
	p.written = headerWritten(p.h)
	n, err := io.WriteString(w, "data: {}\n\n")
	return int64(n), err
}

func (p *headerProbe) Read([]byte) (int, error) { return 0, io.EOF }

// TestFilledHeaderKeepsItsSettings: what the server sets on a client's
// header before the handler runs (no default Content-Type, here) stays
// when the header is filled with a parked header's storage.
func TestFilledHeaderKeepsItsSettings(t *testing.T) {
	s := newHeaderSpares()
	for range 20 { // sync.Pool may drop what it is given
		var parked, h fasthttp.ResponseHeader
		parked.Set("X-Request-Id", "req_1")
		s.park(&parked)
		h.SetNoDefaultContentType(true)
		s.fill(&h)
		if !hasStorage(&h) {
			continue
		}
		h.SetContentLength(2)
		if got := h.String(); strings.Contains(got, "Content-Type") {
			t.Fatalf("a filled header lost the server's NoDefaultContentType:\n%s", got)
		}
		return
	}
	t.Fatal("no header was given a parked header's storage")
}
