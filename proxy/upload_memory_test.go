package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/config"
)

// TestUploadInMemoryKept: an upload whose body is whole in memory already
// (a request of ServeAs) is read where it is, with no copy and no
// temporary file however large (1 MiB here, with no temporary directory
// to write one to), and each candidate gets it with its model spliced in.
func TestUploadInMemoryKept(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	cfg, err := config.Parse([]byte("channels: [{name: demo, type: demo, models: [demo]}]\n"), "test.yaml",
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), AccessLog: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Shutdown(ctx) //nolint:errcheck
	}()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, _ := w.CreateFormFile("file", "a.wav")
	f.Write(bytes.Repeat([]byte{'a'}, 1<<20))
	w.WriteField("model", "demo")
	w.Close()
	body := b.Bytes()

	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(fasthttp.MethodPost)
	ctx.Request.SetRequestURI("/v1/audio/transcriptions")
	ctx.Request.Header.SetContentType(w.FormDataContentType())
	ctx.Request.SetBody(body)
	form := new(openai.FormRequest)
	sp := g.receiveForm(&ctx, g.begin(&ctx, "audio", styleOpenAI), form)
	if sp == nil {
		t.Fatalf("refused: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	defer sp.close()
	if sp.file != nil || &sp.mem[0] != &ctx.PostBody()[0] {
		t.Errorf("the body in memory was spooled again (a file: %v)", sp.file != nil)
	}
	if string(form.Model) != "demo" {
		t.Errorf("model %q", form.Model)
	}
	for range 2 { // each candidate reads it from the start
		r, n := sp.upstream("whisper-1")
		got, err := io.ReadAll(r)
		if want := form.AppendUpstream(nil, body, "whisper-1"); err != nil || !bytes.Equal(got, want) || n != len(want) {
			t.Fatalf("upstream body: %d bytes of %d (%v), want %d", len(got), n, err, len(want))
		}
	}
}

// TestSpoolEndedWithLastData: a body whose last read brings its last bytes
// and io.EOF together counts as read to its end.
func TestSpoolEndedWithLastData(t *testing.T) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("model", "demo")
	w.Close()
	form := new(openai.FormRequest)
	if e := form.Begin([]byte(w.FormDataContentType())); e != nil {
		t.Fatal(e)
	}
	sp := &spool{form: form}
	defer sp.close()
	size := int64(b.Len())
	if e := sp.fill(iotest.DataErrReader(&b), size, 1<<20); e != nil {
		t.Fatal(e)
	}
	if !sp.ended || sp.read != size || sp.left(size) != 0 {
		t.Errorf("after a last read with data and io.EOF: ended %t, read %d of %d, left %d",
			sp.ended, sp.read, size, sp.left(size))
	}
}
