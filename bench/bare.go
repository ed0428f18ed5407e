package main

// Bare mode (-bare): a bare fasthttp pass-through runs in the gateway's
// place, as the floor of the gateway's design (DESIGN.md §7): the same
// server and upstream client, the least work a gateway can do per request.
// It authenticates by the key's SHA-256 hash, reads model and stream with
// one sonic.Get each, forwards the body as it came with the upstream key,
// and relays a stream with a flush after every read of the upstream body.
// It rewrites no model name and adds no stream_options, so a -bare stream
// run has the gateway client's events, without the usage chunk.
//
// Run the harness once with and once without -bare (same flags) and divide:
// the gateway's req/s and CPU per request as a share of the floor's. In
// split placement, -floor runs it beside the gateway instead, in a process
// of its own and in the same rounds, and the report divides.

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/bytedance/sonic"
	"github.com/valyala/fasthttp"
)

// bareProxy is the bare pass-through in front of the mock.
type bareProxy struct {
	srv      *fasthttp.Server
	client   *fasthttp.HostClient
	keyHash  [32]byte
	upstream []byte // Authorization value for the mock
}

// startBare starts the bare pass-through in front of the mock at mockAddr
// and returns its address.
func startBare(mockAddr string) (*bareProxy, string, error) {
	p := &bareProxy{keyHash: sha256.Sum256([]byte(gatewayKey)), upstream: []byte("Bearer " + upstreamKey)}
	p.client = &fasthttp.HostClient{Addr: mockAddr, MaxConns: 65536, StreamResponseBody: true,
		MaxIdleConnDuration: 30 * time.Second, NoDefaultUserAgentHeader: true, DisablePathNormalizing: true}
	p.srv = &fasthttp.Server{Handler: p.handle, Name: "bare", NoDefaultServerHeader: true, NoDefaultContentType: true,
		ReadTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, CloseOnShutdown: true}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	go p.srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	return p, ln.Addr().String(), nil
}

func (p *bareProxy) close() { p.srv.Shutdown() } //nolint:errcheck

var bareBearer = []byte("Bearer ")

func (p *bareProxy) handle(ctx *fasthttp.RequestCtx) {
	auth := ctx.Request.Header.Peek("Authorization")
	if len(auth) <= len(bareBearer) || string(auth[:len(bareBearer)]) != string(bareBearer) {
		ctx.Error(`{"error":{"message":"no key"}}`, 401)
		return
	}
	h := sha256.Sum256(auth[len(bareBearer):])
	if subtle.ConstantTimeCompare(h[:], p.keyHash[:]) != 1 {
		ctx.Error(`{"error":{"message":"bad key"}}`, 401)
		return
	}
	body := ctx.PostBody()
	model, err := sonic.Get(body, "model")
	if err != nil {
		ctx.Error(`{"error":{"message":"no model"}}`, 400)
		return
	}
	if _, err := model.String(); err != nil {
		ctx.Error(`{"error":{"message":"bad model"}}`, 400)
		return
	}
	stream := false
	if n, err := sonic.Get(body, "stream"); err == nil {
		stream, _ = n.Bool()
	}

	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod("POST")
	req.SetRequestURI("http://" + p.client.Addr + "/v1/chat/completions")
	req.Header.SetContentType("application/json")
	req.Header.SetBytesV("Authorization", p.upstream)
	req.SetBodyRaw(body)
	resp := fasthttp.AcquireResponse()
	if err := p.client.Do(req, resp); err != nil {
		fasthttp.ReleaseResponse(resp)
		ctx.Error(fmt.Sprintf(`{"error":{"message":%q}}`, err.Error()), 502)
		return
	}
	ctx.SetStatusCode(resp.StatusCode())
	ctx.Response.Header.SetContentTypeBytes(resp.Header.ContentType())
	if !stream {
		ctx.SetBody(resp.Body())
		fasthttp.ReleaseResponse(resp)
		return
	}
	ctx.SetBodyStream(&bareStream{resp: resp, up: resp.BodyStream()}, -1)
}

// bareStream relays an upstream body as fasthttp's server reads it: through
// WriteTo, one chunk per upstream read, from a 2 KiB buffer, as the
// gateway's relay does, without parsing events.
type bareStream struct {
	resp *fasthttp.Response
	up   io.Reader
	buf  [2 << 10]byte
}

func (s *bareStream) SupportsBodyWriteTo() bool { return true }

func (s *bareStream) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		m, err := s.up.Read(s.buf[:])
		if m > 0 {
			k, werr := w.Write(s.buf[:m])
			n += int64(k)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (s *bareStream) Read(p []byte) (int, error) { return s.up.Read(p) }

// Close ends the upstream response: fasthttp calls it when the stream is
// over or the client went away.
func (s *bareStream) Close() error {
	err := s.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(s.resp)
	return err
}
