package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// TestBodyLimitOtherSpellings: the limit a request's head is given and the
// route its handler takes come from the same path, however the target is
// spelled (absolute-form, a fragment): an upload route's takes an upload
// up to server.max_upload, a JSON route's refuses a body over
// server.max_body. (Before the head and the handler shared the path, the
// head of an upload spelled so got the JSON limit, which only had the
// handler run before 8 KiB were in: TestHeadPath shows the mismatch.)
func TestBodyLimitOtherSpellings(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 1MiB", mediaChannel("up", up, ""), proxy.Options{})
	form, ct := uploadForm("file", 512<<10, "model", "gpt-ears") // over max_body (64KiB), under max_upload
	json := `{"model":"gpt-ears","input":"` + strings.Repeat("x", 100<<10) + `"}`
	cases := []struct {
		target, ct, body string
		status           int
	}{
		{"http://gw/v1/audio/transcriptions", ct, string(form), 200},
		{"/v1/audio/transcriptions#part", ct, string(form), 200},
		{"http://gw/v1/audio/transcriptions?x=1#part", ct, string(form), 200},
		{"http://gw/v1/audio/speech", "application/json", json, 413},
		{"/v1/audio/speech#part", "application/json", json, 413},
	}
	for _, c := range cases {
		resp, b := rawPost(t, tg, c.target, c.ct, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("POST %s: %d %.200s, want %d", c.target, resp.StatusCode, b, c.status)
		}
	}
}

// rawPost sends a POST whose target is written as given, its body whole.
func rawPost(t *testing.T, tg *testGateway, target, ct, body string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\n"+
		"Content-Length: %d\r\n\r\n%s", target, clientKey, ct, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
