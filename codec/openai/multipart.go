package openai

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"slices"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
)

// FormRequest is what the gateway reads of a multipart/form-data upload
// (images/edits, images/variations, audio/transcriptions and
// translations): the model part, to route it and splice the upstream's
// name into it, and the stream part. The file parts are only skipped over.
//
// It reads the body as it arrives (Begin, Write, End), in pieces of any
// size, holding no more of it than a part's header lines and the few bytes
// of a delimiter cut by the end of a piece; ParseForm reads a whole body
// the same way.
//
// The scan is stricter than mime/multipart's reader, so that every body it
// accepts reads the same there (FuzzSpliceForm and FuzzFormStream hold it
// to that): no preamble, CRLF line ends, header lines without folding or
// control bytes, a delimiter followed by CRLF or "--" only, at most
// maxFormParts parts. What any client library sends passes; a body that is
// ambiguous is a 400 rather than a guess, because the allow-list must
// judge the model the upstream will read.
type FormRequest struct {
	// Model is the model part's value (a copy: the body need not be kept).
	Model []byte
	// Stream is true when the stream part is "true".
	Stream bool
	// N is the n part's value, the images an edit or variation asks for:
	// 1 when there is none, 0 when it is not a positive whole number.
	N int
	// ContentType is the client's Content-Type, boundary and all: the
	// upstream gets the same body but the model, so the same boundary.
	ContentType []byte
	// Size is the number of body bytes read so far: the body's size once
	// End has accepted it.
	Size int64

	start, end int64 // the model part's value in the body; start < 0: none yet
	hasN       bool
	parts      []formPart
	scan       formScan
}

// Limits of what a form may hold, beyond which it is a 400: mime/multipart's
// ReadForm also refuses more than 1000 parts, and no client sends part
// headers of kilobytes or a model name of more than a few dozen bytes.
const (
	maxFormParts    = 1000
	maxPartHeader   = 16 << 10
	maxFieldCapture = 1 << 10 // of the model, stream and n values
)

// ParseForm reads a whole multipart/form-data body whose Content-Type is
// contentType. A body that is not such a form, or is malformed, is a 400;
// so is one without exactly one model part, naming model.
func (r *FormRequest) ParseForm(contentType, body []byte) *codec.Error {
	if e := r.Begin(contentType); e != nil {
		return e
	}
	return r.EndWith(body)
}

// EndWith reads rest, the last bytes of the body (all of it, when it is
// whole in memory), and ends the body: Write, then End.
func (r *FormRequest) EndWith(rest []byte) *codec.Error {
	if _, err := r.Write(rest); err != nil {
		return err.(*codec.Error)
	}
	return r.End()
}

// Begin starts reading a body whose Content-Type is contentType: a 400
// unless it is multipart/form-data with a boundary.
func (r *FormRequest) Begin(contentType []byte) *codec.Error {
	parts := r.parts[:0]
	*r = FormRequest{ContentType: contentType, start: -1, parts: parts}
	mt, params, err := mime.ParseMediaType(string(contentType))
	boundary := params["boundary"]
	if err != nil || mt != "multipart/form-data" || boundary == "" {
		return invalid("", "The request must be multipart/form-data with a boundary.")
	}
	return r.begin(boundary)
}

func (r *FormRequest) begin(boundary string) *codec.Error {
	if len(boundary) > 70 || strings.ContainsAny(boundary, "\r\n") {
		return errMalformed
	}
	r.scan = formScan{nlDelim: []byte("\r\n--" + boundary), opening: []byte("--" + boundary + "\r\n"), state: scanFirst}
	return nil
}

// Write reads the next bytes of the body. Its error, a *codec.Error (400),
// comes as soon as the bytes read cannot start a well-formed form; the
// form is then done with, and so is the rest of its body.
func (r *FormRequest) Write(p []byte) (int, error) {
	if r.scan.err != nil {
		return 0, r.scan.err
	}
	data, base := p, r.Size // base: data[0]'s offset in the body
	r.Size += int64(len(p))
	if len(r.scan.hold) > 0 {
		var e *codec.Error
		if data, base, e = r.joinHeld(p, base); e != nil {
			r.scan.err = e
			return 0, e
		}
		if len(data) == 0 {
			return len(p), nil // all of p is held
		}
	}
	used, e := r.consume(data, base, false)
	if e != nil {
		r.scan.err = e
		return 0, e
	}
	r.scan.hold = append(r.scan.hold, data[used:]...)
	return len(p), nil
}

// joinHeld scans the bytes held with as many of p (at offset base in the
// body) as decide them: never more than a delimiter and what follows it,
// or the end of a part's header lines. It returns the rest of p to scan
// and its offset; none when p went to the hold, all of it undecided.
func (r *FormRequest) joinHeld(p []byte, base int64) ([]byte, int64, *codec.Error) {
	s := &r.scan
	held := len(s.hold)
	n := len(p)
	switch s.state {
	case scanFirst:
		n = min(n, len(s.opening))
	case scanValue:
		n = min(n, len(s.nlDelim)+len("--\r\n"))
	case scanHeader:
		end := headerEnd(s.hold, p)
		switch {
		case end >= 0 && held+end-2 > maxPartHeader, end < 0 && headerTooLong(held+len(p)):
			return nil, 0, errMalformed
		case end < 0: // all of p is header lines: search on from its end
			s.hold = append(s.hold, p...)
			s.searched = max(len(s.hold)-3, 0)
			return nil, 0, nil
		}
		n = end
	}
	s.hold = append(s.hold, p[:n]...)
	used, e := r.consume(s.hold, base-int64(held), false)
	if e != nil {
		return nil, 0, e
	}
	if used < held || n == len(p) { // (the first cannot be: n bytes decide the held ones)
		s.hold = append(s.hold[:copy(s.hold, s.hold[used:])], p[n:]...)
		return nil, 0, nil
	}
	s.hold = s.hold[:0]
	return p[used-held:], base + int64(used-held), nil
}

// headerEnd is how many bytes of p end the header lines begun in held (a
// part's header not ended there): through the CRLF of the blank line, or
// through the CRLF that makes them none; -1 when p does not end them.
func headerEnd(held, p []byte) int {
	if len(held) == 1 && held[0] == '\r' && len(p) > 0 && p[0] == '\n' {
		return 1 // no header lines
	}
	blank := []byte("\r\n\r\n")
	for k := len(blank) - 1; k > 0; k-- { // cut after k bytes: the earliest end first
		if bytes.HasSuffix(held, blank[:k]) && bytes.HasPrefix(p, blank[k:]) {
			return len(blank) - k
		}
	}
	if i := bytes.Index(p, blank); i >= 0 {
		return i + len(blank)
	}
	return -1
}

// headerTooLong reports whether n bytes with no end of a part's header
// lines in them are too many to be header lines: not ended in that many,
// they cannot fit in maxPartHeader.
func headerTooLong(n int) bool { return n >= maxPartHeader+2 }

// End ends the body: a 400 when it was cut short, or has no model part, or
// an empty one.
func (r *FormRequest) End() *codec.Error {
	if r.scan.err != nil {
		return r.scan.err
	}
	if _, e := r.consume(r.scan.hold, r.Size-int64(len(r.scan.hold)), true); e != nil {
		return e
	}
	r.scan.hold = r.scan.hold[:0]
	if r.scan.state != scanDone {
		return errMalformed // truncated
	}
	if r.start < 0 || r.start == r.end {
		return invalid("model", "you must provide a model parameter")
	}
	if !r.hasN {
		r.N = 1
	}
	return nil
}

// AppendUpstream appends body, the whole body read, with the model part's
// value replaced by model; the other bytes are copied once, as they are.
func (r *FormRequest) AppendUpstream(dst, body []byte, model string) []byte {
	dst = append(dst, body[:int(r.start)]...)
	dst = append(dst, model...)
	return append(dst, body[int(r.end):]...)
}

// Upstream is the body read, read again from body (where the caller kept
// its Size bytes), with the model part's value replaced by model: its
// bytes in order, and their number. Each call reads from the start.
func (r *FormRequest) Upstream(body io.ReaderAt, model string) (io.Reader, int64) {
	return io.MultiReader(io.NewSectionReader(body, 0, r.start), strings.NewReader(model),
			io.NewSectionReader(body, r.end, r.Size-r.end)),
		r.Size - (r.end - r.start) + int64(len(model))
}

// CheckFile is a 400 naming names[0] unless the form has a file part (one
// with a filename) named one of names: an upload the upstream would refuse
// for its missing file goes no further than the gateway.
func (r *FormRequest) CheckFile(names ...string) *codec.Error {
	plain := false
	for _, p := range r.parts {
		if slices.Contains(names, p.name) {
			if p.file {
				return nil
			}
			plain = true
		}
	}
	if plain {
		return invalid(names[0], "'"+names[0]+"' must be a file (a part with a filename), not a plain form field.")
	}
	return invalid(names[0], "Missing required parameter: '"+names[0]+"'.")
}

// DecodeRequest fails: an upload is relayed, never translated.
func (r *FormRequest) DecodeRequest([]byte, *codec.Request) *codec.Error {
	return invalid("", "This endpoint is served by OpenAI-compatible channels only.")
}

// Unchanged is false: the model part is always written again (its value is
// not kept to compare).
func (r *FormRequest) Unchanged(string) bool { return false }

// Release drops what the form holds.
func (r *FormRequest) Release() { *r = FormRequest{} }

// SpliceForm appends a multipart/form-data body (of the given boundary)
// with its model part's value replaced by model.
func SpliceForm(dst, body []byte, boundary, model string) ([]byte, *codec.Error) {
	var r FormRequest
	if e := r.begin(boundary); e != nil {
		return dst, e
	}
	if e := r.EndWith(body); e != nil {
		return dst, e
	}
	return r.AppendUpstream(dst, body, model), nil
}

// formPart is a part of a form: its field name, and what its header says.
type formPart struct {
	name    string
	encoded bool // has a Content-Transfer-Encoding: its bytes are not its value
	file    bool // its Content-Disposition has a filename
}

var (
	errMalformed    = invalid("", "The multipart body is malformed.")
	errTooManyParts = invalid("", fmt.Sprintf("The form has more than %d parts.", maxFormParts))
)

// formScan is where the scan of a form stands between two pieces of it.
type formScan struct {
	nlDelim []byte // CRLF "--" boundary: what ends a part's value
	opening []byte // "--" boundary CRLF: what starts the body
	state   scanState
	// hold is the bytes of the body not yet consumed: a part's header
	// lines so far, or the start of what may be a delimiter and the few
	// bytes after it that decide it. A piece is never held whole: only as
	// much of it as decides what is held (joinHeld).
	hold []byte
	// searched is how many bytes of the header lines held are searched
	// already for the blank line that ends them.
	searched int
	// value is the captured value of the part being read (model, stream
	// or n), up to maxFieldCapture bytes; capture says whether it is one.
	value   []byte
	capture bool
	over    bool // the captured value was longer than maxFieldCapture
	part    formPart
	err     *codec.Error
}

type scanState uint8

const (
	scanFirst  scanState = iota // before the first delimiter, at the body's start
	scanHeader                  // in a part's header lines
	scanValue                   // in a part's value
	scanDone                    // after the closing delimiter: the epilogue
)

// consume reads from data, whose first byte is at offset base in the body,
// as far as it can decide, and returns how much of data it used; the rest
// waits for more bytes. last is true when no more bytes will come.
func (r *FormRequest) consume(data []byte, base int64, last bool) (int, *codec.Error) {
	s := &r.scan
	pos := 0
	for {
		var n int
		var done bool
		var e *codec.Error
		switch s.state {
		case scanFirst:
			n, done, e = r.first(data[pos:], last)
		case scanHeader:
			n, done, e = r.header(data[pos:], base+int64(pos), last)
		case scanValue:
			n, done, e = r.value(data[pos:], base+int64(pos), last)
		case scanDone:
			return len(data), nil // the epilogue: anything
		}
		pos += n
		if e != nil || !done {
			return pos, e
		}
	}
}

// first reads the opening delimiter, which must start the body.
func (r *FormRequest) first(data []byte, last bool) (n int, done bool, e *codec.Error) {
	open := r.scan.opening
	if len(data) < len(open) {
		if last || !bytes.HasPrefix(open, data) {
			return 0, false, errMalformed
		}
		return 0, false, nil
	}
	if !bytes.HasPrefix(data, open) {
		return 0, false, errMalformed
	}
	r.scan.state = scanHeader
	return len(open), true, nil
}

// header reads a part's header lines up to the blank line that ends them
// (none at all when the part starts with that line).
func (r *FormRequest) header(data []byte, base int64, last bool) (n int, done bool, e *codec.Error) {
	s := &r.scan
	end := -1
	if bytes.HasPrefix(data, []byte("\r\n")) {
		end = 0 // no header lines
	} else if i := bytes.Index(data[s.searched:], []byte("\r\n\r\n")); i >= 0 {
		end = s.searched + i + 2
	}
	// Header lines over maxPartHeader bytes are refused however the body
	// is cut into pieces.
	if end > maxPartHeader || end < 0 && (last || headerTooLong(len(data))) {
		return 0, false, errMalformed
	}
	if end < 0 {
		s.searched = max(len(data)-3, 0) // data is held from here
		return 0, false, nil
	}
	s.searched = 0
	p, ok := readPartHeader(data[:end])
	if !ok {
		return 0, false, errMalformed
	}
	if len(r.parts) == maxFormParts {
		return 0, false, errTooManyParts
	}
	r.parts = append(r.parts, p)
	s.part, s.value, s.over = p, s.value[:0], false
	s.capture = p.name == "model" || p.name == "stream" || p.name == "n"
	if p.name == "model" {
		if r.start >= 0 || p.encoded {
			return 0, false, invalid("model", "'model' must be one plain form field.")
		}
		r.start = base + int64(end) + 2
	}
	s.state = scanValue
	return end + 2, true, nil
}

// value reads a part's value up to the delimiter that ends it, and decides
// from the bytes after the delimiter whether another part follows.
func (r *FormRequest) value(data []byte, base int64, last bool) (n int, done bool, e *codec.Error) {
	s := &r.scan
	for from := 0; ; {
		i := bytes.Index(data[from:], s.nlDelim)
		if i < 0 {
			keep := partialSuffix(data[from:], s.nlDelim)
			if last {
				return 0, false, errMalformed // truncated
			}
			r.keepValue(data[:len(data)-keep])
			return len(data) - keep, false, nil
		}
		at := from + i + len(s.nlDelim)
		switch next, decided := afterDelimiter(data[at:], last); {
		case !decided:
			r.keepValue(data[:from+i])
			return from + i, false, nil
		case next == delimInside:
			from = at // the boundary's bytes inside a value, then more of it
			continue
		case next == delimBad:
			return 0, false, errMalformed
		default:
			r.keepValue(data[:from+i])
			if e := r.endValue(base + int64(from+i)); e != nil {
				return 0, false, e
			}
			if next == delimClose {
				s.state = scanDone
				return at + 2, true, nil
			}
			s.state = scanHeader
			return at + 2, true, nil
		}
	}
}

// What follows a delimiter.
const (
	delimPart   = iota // CRLF: another part
	delimClose         // "--", then the end of the body or CRLF: the form's end
	delimInside        // anything else allowed: the delimiter is part of a value
	delimBad           // what mime/multipart would read otherwise
)

// afterDelimiter decides what the bytes after a delimiter make of it;
// decided is false when more bytes are needed (and may come: not last).
func afterDelimiter(rest []byte, last bool) (next int, decided bool) {
	need := func() (int, bool) {
		if last {
			return delimBad, true
		}
		return 0, false
	}
	switch {
	case bytes.HasPrefix(rest, []byte("\r\n")):
		return delimPart, true
	case bytes.HasPrefix(rest, []byte("--")):
		switch after := rest[2:]; {
		case len(after) == 0 && last, bytes.HasPrefix(after, []byte("\r\n")):
			return delimClose, true
		case len(after) == 0, len(after) == 1 && after[0] == '\r':
			return need()
		}
		return delimBad, true
	case len(rest) == 0, len(rest) == 1 && (rest[0] == '\r' || rest[0] == '-'):
		return need()
	case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n' || rest[0] == '-':
		return delimBad, true
	}
	return delimInside, true
}

// partialSuffix is the length of the longest end of data that begins
// delim: bytes that may be a delimiter once more of the body comes.
func partialSuffix(data, delim []byte) int {
	for k := min(len(data), len(delim)-1); k > 0; k-- {
		if bytes.HasPrefix(delim, data[len(data)-k:]) {
			return k
		}
	}
	return 0
}

// keepValue captures b, more of the value of the part being read, when it
// is one the form reads.
func (r *FormRequest) keepValue(b []byte) {
	s := &r.scan
	if !s.capture {
		return
	}
	if room := maxFieldCapture - len(s.value); len(b) > room {
		b, s.over = b[:room], true
	}
	s.value = append(s.value, b...)
}

// endValue ends the part being read, whose value ends at offset end.
func (r *FormRequest) endValue(end int64) *codec.Error {
	s := &r.scan
	switch v := s.value; {
	case !s.capture:
	case s.part.name == "model":
		r.end = end
		r.Model = append(r.Model[:0], v...)
		if s.over {
			return invalid("model", "'model' is too long.")
		}
	case s.part.name == "stream":
		r.Stream = !s.over && string(v) == "true"
	case s.part.name == "n":
		r.N, r.hasN = 0, true
		if !s.over {
			r.N = positive(v)
		}
	}
	return nil
}

// readPartHeader reads a part's header lines (each ending in CRLF): its
// form name as mime/multipart's Part.FormName reads it, and whether it has
// a Content-Transfer-Encoding.
func readPartHeader(h []byte) (p formPart, ok bool) {
	disposition, seen := "", false
	for len(h) > 0 {
		i := bytes.Index(h, []byte("\r\n"))
		line := h[:i]
		h = h[i+2:]
		key, value, found := bytes.Cut(line, []byte(":"))
		if !found || !isToken(key) || !plainValue(value) {
			return p, false
		}
		v := strings.Trim(string(value), " \t")
		switch {
		case strings.EqualFold(string(key), "Content-Disposition") && !seen:
			disposition, seen = v, true
		case strings.EqualFold(string(key), "Content-Transfer-Encoding"):
			p.encoded = true
		}
	}
	if d, params, err := mime.ParseMediaType(disposition); err == nil {
		p.file = params["filename"] != "" // as mime/multipart's Part.FileName, whatever the disposition
		if d == "form-data" {
			p.name = params["name"] // as Part.FormName
		}
	}
	return p, true
}

// isToken reports whether b is a header field name (RFC 7230's token).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// plainValue reports whether a header value has no control bytes but tabs.
func plainValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
