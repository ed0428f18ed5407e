package openai

import (
	"bytes"
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
// The scan is stricter than mime/multipart's reader, so that every body it
// accepts reads the same there (FuzzSpliceForm holds it to that): no
// preamble, CRLF line ends, header lines without folding or control bytes,
// a delimiter followed by CRLF or "--" only. What any client library sends
// passes; a body that is ambiguous is a 400 rather than a guess, because
// the allow-list must judge the model the upstream will read.
type FormRequest struct {
	// Model is the model part's value; it points into the body.
	Model []byte
	// Stream is true when the stream part is "true".
	Stream bool
	// N is the n part's value, the images an edit or variation asks for:
	// 1 when there is none, 0 when it is not a positive whole number.
	N int
	// ContentType is the client's Content-Type, boundary and all: the
	// upstream gets the same body but the model, so the same boundary.
	ContentType []byte

	start, end int // the model part's value in the body
	parts      []formPart
}

// ParseForm reads a multipart/form-data body whose Content-Type is
// contentType. A body that is not such a form, or is malformed, is a 400;
// so is one without exactly one model part, naming model.
func (r *FormRequest) ParseForm(contentType, body []byte) *codec.Error {
	*r = FormRequest{ContentType: contentType}
	mt, params, err := mime.ParseMediaType(string(contentType))
	boundary := params["boundary"]
	if err != nil || mt != "multipart/form-data" || boundary == "" {
		return invalid("", "The request must be multipart/form-data with a boundary.")
	}
	return r.parse(body, boundary)
}

// parse reads the form's parts, as ParseForm.
func (r *FormRequest) parse(body []byte, boundary string) *codec.Error {
	parts, e := scanForm(body, boundary)
	if e != nil {
		return e
	}
	r.parts = parts
	r.start = -1
	hasN := false
	for _, p := range parts {
		switch p.name {
		case "model":
			if r.start >= 0 || p.encoded {
				return invalid("model", "'model' must be one plain form field.")
			}
			r.start, r.end = p.start, p.end
		case "stream":
			r.Stream = string(body[p.start:p.end]) == "true"
		case "n":
			r.N = positive(body[p.start:p.end])
			hasN = true
		}
	}
	if r.start < 0 || r.start == r.end {
		return invalid("model", "you must provide a model parameter")
	}
	if !hasN {
		r.N = 1
	}
	r.Model = body[r.start:r.end]
	return nil
}

// AppendUpstream appends body with the model part's value replaced by
// model; the other bytes are copied once, as they are.
func (r *FormRequest) AppendUpstream(dst, body []byte, model string) []byte {
	dst = append(dst, body[:r.start]...)
	dst = append(dst, model...)
	return append(dst, body[r.end:]...)
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

// Release drops the hold on the body.
func (r *FormRequest) Release() { *r = FormRequest{} }

// SpliceForm appends a multipart/form-data body (of the given boundary)
// with its model part's value replaced by model.
func SpliceForm(dst, body []byte, boundary, model string) ([]byte, *codec.Error) {
	var r FormRequest
	if e := r.parse(body, boundary); e != nil {
		return dst, e
	}
	return r.AppendUpstream(dst, body, model), nil
}

// formPart is a part of a form: its field name and its value's span.
type formPart struct {
	name       string
	start, end int
	encoded    bool // has a Content-Transfer-Encoding: its bytes are not its value
	file       bool // its Content-Disposition has a filename
}

var errMalformed = invalid("", "The multipart body is malformed.")

// scanForm splits a form into its parts.
func scanForm(body []byte, boundary string) ([]formPart, *codec.Error) {
	delim := "--" + boundary
	if len(boundary) > 70 || strings.ContainsAny(boundary, "\r\n") || !bytes.HasPrefix(body, []byte(delim+"\r\n")) {
		return nil, errMalformed
	}
	nlDelim := []byte("\r\n" + delim)
	var parts []formPart
	pos := len(delim) + 2
	for {
		p, next, last, ok := scanPart(body, pos, nlDelim)
		if !ok {
			return nil, errMalformed
		}
		parts = append(parts, p)
		if last {
			return parts, nil
		}
		pos = next
	}
}

// scanPart reads the part at pos: its headers, then its value up to the
// next delimiter; next is where the part after it starts, last is true
// when the delimiter closes the form.
func scanPart(body []byte, pos int, nlDelim []byte) (p formPart, next int, last, ok bool) {
	head := bytes.Index(body[pos:], []byte("\r\n\r\n"))
	if bytes.HasPrefix(body[pos:], []byte("\r\n")) {
		head = -2 // no header lines
	} else if head < 0 {
		return p, 0, false, false
	}
	if p, ok = readPartHeader(body[pos : pos+head+2]); !ok {
		return p, 0, false, false
	}
	p.start = pos + head + 4
	for from := p.start; ; {
		i := bytes.Index(body[from:], nlDelim)
		if i < 0 {
			return p, 0, false, false // truncated
		}
		at := from + i + len(nlDelim)
		switch rest := body[at:]; {
		case bytes.HasPrefix(rest, []byte("\r\n")):
			p.end = from + i
			return p, at + 2, false, true
		case bytes.HasPrefix(rest, []byte("--")):
			p.end = from + i
			after := rest[2:]
			return p, 0, true, len(after) == 0 || bytes.HasPrefix(after, []byte("\r\n"))
		case len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n' || rest[0] == '-':
			return p, 0, false, false // a delimiter mime/multipart would read otherwise
		}
		from = at // the boundary's bytes inside a value, then more of it
	}
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
