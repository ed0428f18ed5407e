package proxy_test

import (
	"net"
	"strings"
	"testing"
)

// Over an https channel, whose TLS connection the gateway makes itself
// (to find the request id above TLS), whole answers and streams come
// through intact, twice each: on a new connection and on a pooled one.
func TestTLSChannelServes(t *testing.T) {
	evs := events(fixture(t, "chat_stream.sse"))
	whole := fixture(t, "chat_response.json")
	up := newTLSMock(t, streamedOrWhole(streamReply(evs, 0), jsonReply(200, whole)))
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	client := sdkClient(tg)
	for range 2 {
		checkWhole(t, client, whole)
		checkStream(t, client, nil)
	}
	if up.hits.Load() != 4 {
		t.Errorf("the upstream got %d requests, want 4", up.hits.Load())
	}
}

// An https upstream that does not complete the TLS handshake fails the
// request as a timeout (504; that the handshake waits under the connect
// timeout's deadline exactly is TestHandshakeUnderDialDeadline's), and one
// whose certificate is not trusted fails it before anything is sent (502);
// the client's error names no certificate, and the channel's error says
// what failed.
func TestTLSHandshakeFails(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { conn.Close() }) // held open, never answered
			}
		}()
		tg := startGateway(t, channel("oa", "https://"+ln.Addr().String()+"/v1", "timeouts: {connect: 300ms}"))
		resp, body := tg.post(t, miniBody)
		checkError(t, resp, body, 504, "upstream_timeout")
	})
	t.Run("untrusted", func(t *testing.T) {
		up := newUnstartedMock(t, jsonReply(200, fixture(t, "chat_response.json")))
		up.srv.StartTLS() // its certificate not trusted
		tg := startGateway(t, channel("oa", up.baseURL(), ""))
		resp, body := tg.post(t, miniBody)
		checkError(t, resp, body, 502, "upstream_unreachable")
		if strings.Contains(string(body), "certificate") {
			t.Errorf("the client is told of the certificate: %s", body)
		}
		if up.hits.Load() != 0 {
			t.Error("the request reached an upstream the gateway does not trust")
		}
		if !strings.Contains(tg.logs.String(), "certificate") {
			t.Errorf("the log does not say the certificate failed:\n%s", tg.logs.String())
		}
	})
}
