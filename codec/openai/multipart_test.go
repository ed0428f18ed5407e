package openai_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// formBody is a form as the OpenAI SDKs send it: the file before the model.
func formBody(t testing.TB, boundary string, fields ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.SetBoundary(boundary); err != nil {
		t.Fatal(err)
	}
	fw, _ := w.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF\r\n--not the boundary\x00\xff"))
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	w.Close()
	return b.Bytes()
}

func TestSpliceForm(t *testing.T) {
	body := formBody(t, "XyZ", "model", "whisper", "language", "en", "stream", "true")
	var r openai.FormRequest
	if e := r.ParseForm([]byte(`multipart/form-data; boundary="XyZ"`), body); e != nil {
		t.Fatal(e)
	}
	if string(r.Model) != "whisper" || !r.Stream {
		t.Fatalf("model %q stream %v", r.Model, r.Stream)
	}
	got := r.AppendUpstream(nil, body, "whisper-1")
	if want := bytes.Replace(body, []byte("\r\n\r\nwhisper\r\n"), []byte("\r\n\r\nwhisper-1\r\n"), 1); !bytes.Equal(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	for _, c := range []struct {
		name, ctype string
		body        []byte
		param       string
	}{
		{"no model", "multipart/form-data; boundary=XyZ", formBody(t, "XyZ", "language", "en"), "model"},
		{"empty model", "multipart/form-data; boundary=XyZ", formBody(t, "XyZ", "model", ""), "model"},
		{"two models", "multipart/form-data; boundary=XyZ", formBody(t, "XyZ", "model", "a", "model", "b"), "model"},
		{"truncated", "multipart/form-data; boundary=XyZ", body[:len(body)-10], ""},
		{"other boundary", "multipart/form-data; boundary=abc", body, ""},
		{"no boundary", "multipart/form-data", body, ""},
		{"json", "application/json", []byte(`{"model":"m"}`), ""},
	} {
		e := r.ParseForm([]byte(c.ctype), c.body)
		if e == nil || e.Status != 400 || e.Param != c.param {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
}

// TestFormStreamHoldsLittle: read in 64 KiB pieces, each of which ends in
// what may start a delimiter (a CR), then one that ends inside a part's
// header lines, a form holds between pieces only those bytes and the few
// that decide them, never a piece whole.
func TestFormStreamHoldsLittle(t *testing.T) {
	const piece = 64 << 10
	file := func(n int) []byte {
		return bytes.Replace(formBody(t, "XyZ", "model", "whisper-1", "language", "en"),
			[]byte("RIFF\r\n--not the boundary\x00\xff"), bytes.Repeat([]byte{'\r'}, n), 1)
	}
	at := bytes.Index(file(4*piece), []byte(`name="model"`))
	ct := []byte("multipart/form-data; boundary=XyZ")
	var r openai.FormRequest
	// A file of 4 pieces; one grown so that the fifth piece ends at the
	// model part's name.
	for _, size := range []int{4 * piece, 5*piece - at + 4*piece} {
		if e := r.Begin(ct); e != nil {
			t.Fatal(e)
		}
		most := 0
		for rest := file(size); len(rest) > 0; {
			n := min(len(rest), piece)
			if _, err := r.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest, most = rest[n:], max(most, r.Held())
		}
		if e := r.End(); e != nil || string(r.Model) != "whisper-1" {
			t.Fatalf("%v, model %q", e, r.Model)
		}
		if most > 1<<10 {
			t.Errorf("a file of %d bytes: held %d bytes between pieces of %d", size, most, piece)
		}
	}
}

// TestFormStreamLongHeader: a part's header lines of about the limit's
// length (16 KiB) get the same verdict read whole and read in pieces of
// any size, however a piece ends around the blank line that ends them.
func TestFormStreamLongHeader(t *testing.T) {
	ct := []byte("multipart/form-data; boundary=XyZ")
	for _, size := range []int{16<<10 - 1, 16 << 10, 16<<10 + 1, 16<<10 + 2} {
		first := "Content-Disposition: form-data; name=\"model\"\r\n"
		header := first + "X-Pad: " + strings.Repeat("a", size-len(first)-len("X-Pad: \r\n")) + "\r\n"
		body := []byte("--XyZ\r\n" + header + "\r\nwhisper-1\r\n--XyZ--\r\n")
		var whole openai.FormRequest
		want := whole.ParseForm(ct, body)
		if (want == nil) != (size <= 16<<10) {
			t.Fatalf("header lines of %d bytes read whole: %v", size, want)
		}
		for _, piece := range []int{1, 3, 4093, 4096, 16<<10 + 7, 64 << 10} {
			var r openai.FormRequest
			got := r.Begin(ct)
			for rest := body; got == nil && len(rest) > 0; {
				n := min(len(rest), piece)
				if _, err := r.Write(rest[:n]); err != nil {
					got = err.(*codec.Error)
				}
				rest = rest[n:]
			}
			if got == nil {
				got = r.End()
			}
			if (got == nil) != (want == nil) || got == nil && string(r.Model) != "whisper-1" {
				t.Errorf("header lines of %d bytes in pieces of %d: %v, model %q; whole: %v", size, piece, got, r.Model, want)
			}
		}
	}
}

// FuzzSpliceForm holds SpliceForm to mime/multipart's reader: a body it
// accepts reads there part by part, and so does the spliced body, with
// the same parts but the model's value; and a part is a file to
// CheckFile when mime/multipart gives it a file name.
func FuzzSpliceForm(f *testing.F) {
	f.Add(formBody(f, "XyZ", "model", "whisper", "language", "en"), "XyZ", "whisper-1")
	f.Add(formBody(f, "b-1", "prompt", "x", "model", "gpt-image-1"), "b-1", "dall-e-2")
	f.Add([]byte("--a\r\n\r\nx\r\n--a--"), "a", "m")
	f.Add([]byte("--a\r\nContent-Disposition: form-data; name=model\r\n\r\nm\r\n--a\r\n--a--\r\n"), "a", "n")
	f.Add([]byte("--a\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\nRIFF\r\n"+
		"--a\r\nContent-Disposition: form-data; name=model\r\n\r\nm\r\n--a--\r\n"), "a", "n")
	f.Fuzz(func(t *testing.T, body []byte, boundary, model string) {
		if strings.ContainsAny(model, "\r\n-") {
			t.Skip() // a channel's model name, not a client's input
		}
		out, e := openai.SpliceForm(nil, body, boundary, model)
		if e != nil {
			return
		}
		before, after := readForm(t, body, boundary), readForm(t, out, boundary)
		if len(before) != len(after) {
			t.Fatalf("%d parts, then %d", len(before), len(after))
		}
		models := 0
		for i, p := range before {
			q := after[i]
			if p.name == "model" {
				models++
				p.value = model
			}
			if p != q {
				t.Fatalf("part %d: %+v, then %+v", i, p, q)
			}
		}
		if models != 1 {
			t.Fatalf("%d model parts", models)
		}
		checkFiles(t, body, boundary, before)
	})
}

// checkFiles holds FormRequest.CheckFile to the parts mime/multipart read
// of body: a name has a file when one of its parts has a file name.
func checkFiles(t *testing.T, body []byte, boundary string, parts []part) {
	var r openai.FormRequest
	if r.ParseForm([]byte(mime.FormatMediaType("multipart/form-data", map[string]string{"boundary": boundary})), body) != nil {
		return // a boundary no Content-Type can carry
	}
	for _, p := range parts {
		want := false
		for _, q := range parts {
			want = want || q.name == p.name && q.file
		}
		if got := r.CheckFile(p.name) == nil; got != want {
			t.Fatalf("CheckFile(%q) found a file: %v, mime/multipart: %v\n%q", p.name, got, want, body)
		}
	}
}

type part struct {
	name, header, value string
	file                bool // mime/multipart gives it a file name
}

func readForm(t *testing.T, body []byte, boundary string) []part {
	t.Helper()
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			t.Fatalf("mime/multipart: %v\n%q", err, body)
		}
		v, err := io.ReadAll(p)
		if err != nil {
			t.Fatalf("mime/multipart: %v\n%q", err, body)
		}
		parts = append(parts, part{p.FormName(), strings.Join(p.Header.Values("Content-Disposition"), ";"), string(v),
			p.FileName() != ""})
	}
}

// FuzzFormStream holds the form read piece by piece (Begin, Write, End,
// as the gateway reads an upload from the network) to the same form read
// whole, however the body is cut: the same verdict, model, stream, n and
// files; Upstream gives the bytes AppendUpstream does; and a body it
// accepts reads in mime/multipart with that model.
func FuzzFormStream(f *testing.F) {
	f.Add(formBody(f, "XyZ", "model", "whisper", "stream", "true"), "XyZ", []byte{1, 7, 3, 200})
	f.Add(formBody(f, "b-1", "n", "2", "model", "gpt-image-1"), "b-1", []byte{0})
	f.Add([]byte("--a\r\nContent-Disposition: form-data; name=model\r\n\r\nm\r\n--a\r\n--a--\r\n"), "a", []byte{5, 1, 1})
	f.Add([]byte("--a\r\n\r\nx\r\n--a-x\r\n--a--"), "a", []byte{9, 1})
	f.Fuzz(func(t *testing.T, body []byte, boundary string, cuts []byte) {
		ct := []byte(mime.FormatMediaType("multipart/form-data", map[string]string{"boundary": boundary}))
		var whole, piece openai.FormRequest
		ew := whole.ParseForm(ct, body)
		ep := piece.Begin(ct)
		for rest, i := body, 0; ep == nil && len(rest) > 0; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(n, int(cuts[i%len(cuts)])+1)
			}
			if _, err := piece.Write(rest[:n]); err != nil {
				ep = err.(*codec.Error)
			}
			rest = rest[n:]
		}
		if ep == nil {
			ep = piece.End()
		}
		if (ew == nil) != (ep == nil) || ew != nil && ew.Message != ep.Message {
			t.Fatalf("whole: %v, in pieces %v: %v\n%q", ew, cuts, ep, body)
		}
		if ew != nil {
			return
		}
		if string(whole.Model) != string(piece.Model) || whole.Stream != piece.Stream || whole.N != piece.N ||
			piece.Size != int64(len(body)) {
			t.Fatalf("whole %q %v %d, in pieces %q %v %d size %d", whole.Model, whole.Stream, whole.N,
				piece.Model, piece.Stream, piece.N, piece.Size)
		}
		up, n := piece.Upstream(bytes.NewReader(body), "up-model")
		got, err := io.ReadAll(up)
		if want := whole.AppendUpstream(nil, body, "up-model"); err != nil || !bytes.Equal(got, want) || n != int64(len(want)) {
			t.Fatalf("Upstream: %q (%d, %v), AppendUpstream %q", got, n, err, want)
		}
		model := ""
		for _, p := range readForm(t, body, boundary) {
			if p.name == "model" {
				model = p.value
			}
			if (whole.CheckFile(p.name) == nil) != (piece.CheckFile(p.name) == nil) {
				t.Fatalf("CheckFile(%q) differs", p.name)
			}
		}
		if model != string(piece.Model) {
			t.Fatalf("mime/multipart: model %q, FormRequest %q", model, piece.Model)
		}
	})
}
