package proxy

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// demoUpstream is the built-in demo channel: an OpenAI-compatible server
// inside the process, on an in-memory listener, whose model answers with a
// deterministic reply streamed word by word at a fixed pace. It lets the
// gateway run, and be tried end to end, with no network and no provider key.
type demoUpstream struct {
	ln     *fasthttputil.InmemoryListener
	server *fasthttp.Server
	pace   time.Duration
}

func newDemoUpstream(pace time.Duration) *demoUpstream {
	d := &demoUpstream{ln: fasthttputil.NewInmemoryListener(), pace: pace}
	d.server = &fasthttp.Server{Handler: d.serve, NoDefaultServerHeader: true, Logger: quietLogger{}}
	go d.server.Serve(d.ln) //nolint:errcheck // ends when the listener closes
	return d
}

func (d *demoUpstream) dial() (net.Conn, error) { return d.ln.Dial() }

func (d *demoUpstream) close() {
	d.server.Shutdown() //nolint:errcheck
	d.ln.Close()        //nolint:errcheck
}

func (d *demoUpstream) serve(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/v1/chat/completions" {
		ctx.SetStatusCode(404)
		ctx.SetBody(openai.AppendError(nil, &codec.Error{Kind: codec.KindNotFound, Message: "demo: unknown path"}))
		return
	}
	var req codec.Request
	if e := openai.DecodeRequest(ctx.PostBody(), &req); e != nil {
		ctx.SetStatusCode(e.Status)
		ctx.SetBody(openai.AppendError(nil, e))
		return
	}
	includeUsage := bytes.Contains(ctx.PostBody(), []byte(`"include_usage":true`))
	// The demo model counts its prompt as the gateway estimates prompts,
	// so that every count a client sees of one prompt agrees.
	prompt, last := codec.EstimateTokens(&req), ""
	for _, m := range req.Messages {
		if m.Role == codec.RoleUser {
			var text []string
			for _, p := range m.Parts {
				text = append(text, p.Text)
			}
			last = strings.Join(text, " ")
		}
	}
	words := demoReply(last)
	c := openai.Completion{ID: "chatcmpl-demo", Created: time.Now().Unix(), Model: req.Model}
	usage := codec.Usage{Input: prompt, Output: len(words)}
	if !req.Stream {
		ctx.SetContentType("application/json")
		ctx.SetBody(c.AppendResponse(nil, strings.Join(words, ""), "stop", usage))
		return
	}
	ctx.SetContentType("text/event-stream")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		var b []byte
		send := func(chunk []byte) bool {
			b = sse.AppendEvent(b[:0], "", chunk)
			w.Write(b) //nolint:errcheck // Flush reports the error
			return w.Flush() == nil
		}
		var chunk []byte
		if !send(c.AppendChunk(chunk[:0], true, "", "")) {
			return
		}
		for _, word := range words {
			time.Sleep(d.pace)
			if !send(c.AppendChunk(chunk[:0], false, word, "")) {
				return
			}
		}
		send(c.AppendChunk(chunk[:0], false, "", "stop"))
		if includeUsage {
			send(c.AppendUsageChunk(chunk[:0], usage))
		}
		send([]byte("[DONE]"))
	})
}

// demoReply is the demo model's answer to a user message, as words that keep
// their trailing space.
func demoReply(user string) []string {
	said := strings.Fields(user)
	if len(said) > 24 {
		said = append(said[:24], "…")
	}
	text := "Hello from the Rosetta demo model. You said: \"" + strings.Join(said, " ") +
		"\". Add a real channel to rosetta.yaml to talk to a real model."
	words := strings.SplitAfter(text, " ")
	return words
}

// quietLogger drops the demo server's messages: a client that goes away
// mid-stream is normal there, and the gateway logs the request itself.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
