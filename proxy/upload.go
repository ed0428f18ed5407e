package proxy

// Uploads (multipart/form-data: images edits and variations, audio
// transcriptions and translations) are read from the connection as they
// arrive, into a spool: the first spoolMemory bytes in memory, the rest in
// a temporary file, whatever the upload's size. The form is scanned on the
// way (openai.FormRequest), so that its model, which the SDKs send after
// the file, is known when the last byte is in; then the model is allowed,
// routed and admitted, and each candidate in turn gets the spooled bytes
// read again from the start with its model name spliced in, as a body
// stream of known length. The file is unlinked as soon as it is made: it
// goes with its descriptor, when the request ends or the process does.

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/store"
)

// spoolMemory is how much of an upload is held in memory before the rest
// goes to disk: an image to edit or a short clip (a few hundred KiB) never
// touches the disk, and a hundred uploads at once hold 25 MiB at most,
// whatever their sizes (a 50 MB one raised the RSS by 114 MiB when uploads
// were read whole).
const spoolMemory = 256 << 10

// fasthttpDrain is how much of a body the server reads and discards after
// a handler that left it unread (fasthttp's maxUnreadStreamBodySize); with
// more left it closes the connection at once, which a client still sending
// sees as a reset instead of the answer.
const fasthttpDrain = 256 << 10

// uploadBufs are the buffers an upload is read from the connection with.
var uploadBufs = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// serveForm serves an OpenAI-style upload: it spools the body, reads its
// model, stream and n parts on the way, and sends it upstream as it came
// but for the model part's value, with the client's Content-Type, so its
// boundary.
func (g *Gateway) serveForm(ctx *fasthttp.RequestCtx, endpoint string, op *operation) {
	x := g.open(ctx, op, endpoint, styleOpenAI)
	if x == nil {
		leaveUnread(ctx, int64(ctx.Request.Header.ContentLength())) // all of it
		return
	}
	form := new(openai.FormRequest)
	x.inbound = form
	sp := g.receiveForm(ctx, x, form)
	if sp == nil {
		return // answered
	}
	defer sp.close()
	// The request's time starts now, its body in, as a JSON request's
	// does (LazyRequestTime): the client's upload is neither latency nor
	// taken from the upstream's deadline.
	x.start = time.Now()
	if e := form.CheckFile(op.files...); e != nil {
		g.fail(ctx, x, e)
		return
	}
	x.stream, x.contentType, x.upload = form.Stream, form.ContentType, sp
	if op.unit == store.UnitImages {
		x.units = form.N
	}
	// No body for admitModel: a file's bytes are no estimate of tokens;
	// the answer's usage settles the limits.
	g.serve(ctx, x, op, nil, form.Model)
}

// receiveForm reads the upload of x into a spool, scanning it as form on
// the way. It answers (and finishes x) and returns nil when the body is
// refused or cannot be read; the caller closes the spool it returns.
func (g *Gateway) receiveForm(ctx *fasthttp.RequestCtx, x *exchange, form *openai.FormRequest) *spool {
	limit := int64(g.cfg.Server.MaxUpload)
	stream := ctx.RequestBodyStream()
	size := int64(ctx.Request.Header.ContentLength())
	if stream == nil { // a request made in the process (ServeAs): whole in memory already
		size = int64(len(ctx.PostBody()))
	}
	if e := form.Begin(ctx.Request.Header.ContentType()); e != nil {
		g.fail(ctx, x, e)
		leaveUnread(ctx, size)
		return nil
	}
	if size > limit { // refused before a byte more is read
		g.refuseTooLarge(ctx, x, g.cfg.Server.MaxUpload)
		return nil
	}
	sp := &spool{form: form}
	var e *codec.Error
	if stream == nil {
		e = sp.keep(ctx.PostBody())
	} else {
		memory := int64(spoolMemory)
		if size >= 0 && size < memory {
			memory = size // a small upload's buffer is its size
		}
		sp.mem = make([]byte, 0, memory)
		e = sp.fill(stream, size, limit)
	}
	if e != nil {
		sp.close()
		switch {
		case e.Status == 413:
			g.refuseTooLarge(ctx, x, g.cfg.Server.MaxUpload)
		case e.Status == 500:
			g.log.Error("cannot spool an upload", "id", string(x.id), "err", e.Message)
			e = errorf(500, codec.KindServer, "", "Internal error (request id %s).", x.id)
			fallthrough
		default:
			g.fail(ctx, x, e)
			leaveUnread(ctx, sp.left(size))
		}
		return nil
	}
	return sp
}

// leaveUnread sends the answer in ctx now and ends the connection when
// more of the body is left unread on the wire (left; < 0: unknown, a
// chunked body) than fasthttp would drain, so that a client still sending
// reads it rather than a reset (refuseBody).
func leaveUnread(ctx *fasthttp.RequestCtx, left int64) {
	if s := ctx.RequestBodyStream(); s == nil || left >= 0 && left <= fasthttpDrain {
		return
	}
	ctx.SetConnectionClose()
	refuseBody(ctx)
}

// spool holds an upload's body: its first spoolMemory bytes in memory,
// the rest in an unlinked temporary file. It is an io.ReaderAt over the
// body, for each attempt to read it again from the start.
type spool struct {
	form     *openai.FormRequest
	mem      []byte
	file     *os.File
	unlinked bool  // the file has no name left to remove
	size     int64 // the bytes spooled
	read     int64 // the bytes read from the connection, kept or not
	ended    bool  // the body was read to its end
}

// keep makes body, an upload already whole in memory, the spool's bytes,
// with no copy, and reads it as the form.
func (s *spool) keep(body []byte) *codec.Error {
	s.mem, s.size, s.read, s.ended = body, int64(len(body)), int64(len(body)), true
	return s.form.EndWith(body)
}

// left is how much of a body of size bytes (size < 0: chunked) fill left
// on the wire: none once it read the end, -1 when unknown.
func (s *spool) left(size int64) int64 {
	switch {
	case s.ended:
		return 0
	case size < 0:
		return -1
	}
	return size - s.read
}

// fill reads body (size bytes; size < 0: to its end) into the spool and
// the form, stopping at the first error: the form's 400, a 413 past limit,
// a read error as unreadable says it, a 500 when the spool cannot write.
// A chunked body that is no form is read on, unkept, up to its end or
// limit: over its limit it is a 413 like any other.
func (s *spool) fill(body io.Reader, size, limit int64) *codec.Error {
	buf := uploadBufs.Get().(*[64 << 10]byte)
	defer uploadBufs.Put(buf)
	var bad *codec.Error // the form's
	for {
		n, err := body.Read(buf[:])
		s.read += int64(n) // before ended: a last read may bring data with io.EOF
		s.ended = err == io.EOF && (size < 0 || s.read >= size)
		if s.read > limit {
			return errorf(413, codec.KindTooLarge, "", "")
		}
		if n > 0 && bad == nil {
			if _, ferr := s.form.Write(buf[:n]); ferr != nil {
				if bad = ferr.(*codec.Error); size >= 0 {
					return bad
				}
			} else if werr := s.write(buf[:n]); werr != nil {
				return errorf(500, codec.KindServer, "", "%v", werr)
			}
		}
		switch {
		case err == io.EOF && size >= 0 && s.read < size:
			return unreadable(io.ErrUnexpectedEOF) // fasthttp's stream ends where the client went
		case err == io.EOF && bad != nil:
			return bad
		case err == io.EOF:
			return s.form.End()
		case err != nil:
			return unreadable(err)
		}
	}
}

// write appends p to the spool.
func (s *spool) write(p []byte) error {
	if room := spoolMemory - len(s.mem); room > 0 {
		k := min(room, len(p))
		s.mem = append(s.mem, p[:k]...)
		s.size += int64(k)
		p = p[k:]
	}
	if len(p) == 0 {
		return nil
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "rosetta-upload-*")
		if err != nil {
			return err
		}
		s.file, s.unlinked = f, os.Remove(f.Name()) == nil // not where open files cannot be removed
	}
	_, err := s.file.Write(p)
	s.size += int64(len(p))
	return err
}

// ReadAt reads the spooled body at off.
func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(s.mem)) {
		n = copy(p, s.mem[off:])
		if n == len(p) {
			return n, nil
		}
	}
	if s.file == nil {
		return n, io.EOF
	}
	m, err := s.file.ReadAt(p[n:], off+int64(n)-int64(len(s.mem)))
	return n + m, err
}

// upstream is the body to send for model: the spooled bytes with the
// model spliced in, and their number.
func (s *spool) upstream(model string) (io.Reader, int) {
	r, n := s.form.Upstream(s, model)
	return r, int(n)
}

// close lets the spool's file go.
func (s *spool) close() {
	if s.file == nil {
		return
	}
	s.file.Close() //nolint:errcheck // read only from now on
	if !s.unlinked {
		os.Remove(s.file.Name()) //nolint:errcheck
	}
	s.file = nil
}
