package proxy_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// hungUpstream accepts connections and never reads from them nor answers:
// an upstream that hangs in the middle of an upload. release closes them.
type hungUpstream struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newHungUpstream(t *testing.T) *hungUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungUpstream{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ln.Close(); h.release() })
	return h
}

func (h *hungUpstream) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
	h.conns = nil
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// uploadForm is a transcription upload of size bytes of audio with the
// given fields; fileField "" leaves the file out.
func uploadForm(fileField string, size int, fields ...string) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if fileField != "" {
		f, _ := w.CreateFormFile(fileField, "a.wav")
		f.Write(bytes.Repeat([]byte{'a'}, size))
	}
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestUploadBadInput: bad uploads get a 400 or 403 in OpenAI's shape
// naming what is wrong, without the upstream called: a malformed form
// (truncated, no boundary), no file, a file that is a plain field, a body
// that is not a form, a model the key may not use. A client that goes away
// mid-upload calls no upstream; one that goes away while the upstream
// works on its upload has that request cancelled; an upstream that hangs
// while taking an upload is a 504 at its timeout. After a second round of
// all of it the goroutines and open files are back to what they were after
// the first, and no temporary file is left: an upload spooled to disk
// (the 4 and 8 MiB ones) has its file closed however its request ends.
func TestUploadBadInput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	up := mediaUpstream(t)
	hung := newHungUpstream(t)
	cancelled := make(chan struct{}, 1)
	slow := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	})
	tg := startGatewayServer(t, "  max_upload: 16MiB", mediaChannel("up", up, "")+
		"  - {name: hung, type: openai, base_url: \"http://"+hung.ln.Addr().String()+"/v1\", api_keys: [k], models: [gpt-hung], timeouts: {first_byte: 300ms, total: 1s}}\n"+
		"  - {name: slow, type: openai, base_url: \""+slow.baseURL()+"\", api_keys: [k], models: [gpt-slow]}\n",
		proxy.Options{})
	post := func(body []byte, ct string) (*http.Response, []byte) {
		return rawForm(t, tg, "/v1/audio/transcriptions", body, ct)
	}
	ok, ct := uploadForm("file", 1000, "model", "gpt-ears")
	bad := func(name string, body []byte, ct string, status int, param, mention string) {
		t.Helper()
		resp, b := post(body, ct)
		checkError(t, resp, b, status, "")
		if !strings.Contains(string(b), mention) || param != "" && !strings.Contains(string(b), `"param":"`+param+`"`) {
			t.Errorf("%s: %s, want param %q naming %q", name, b, param, mention)
		}
	}
	round := func() {
		if resp, b := post(ok, ct); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		hits := up.hits.Load()
		bad("truncated", ok[:len(ok)-30], ct, 400, "", "malformed")
		bad("no boundary", ok, "multipart/form-data", 400, "", "multipart/form-data with a boundary")
		noFile, noFileCT := uploadForm("", 0, "model", "gpt-ears")
		bad("no file", noFile, noFileCT, 400, "file", "Missing required parameter: 'file'")
		plain, plainCT := uploadForm("", 0, "model", "gpt-ears", "file", "RIFF")
		bad("file as a plain field", plain, plainCT, 400, "file", "must be a file")
		bad("JSON", []byte(`{"model":"gpt-ears","file":"RIFF"}`), "application/json", 400, "", "multipart/form-data")
		secret, secretCT := uploadForm("file", 1000, "model", "secret-model")
		bad("model not allowed", secret, secretCT, 403, "", "secret-model")
		if n := up.hits.Load(); n != hits {
			t.Errorf("%d bad uploads reached the upstream", n-hits)
		}

		// A client gone mid-upload: half of a 4 MiB body, then the close.
		big, bigCT := uploadForm("file", 4<<20, "model", "gpt-ears")
		c := sendUpload(t, tg, bigCT, big, len(big)/2)
		c.Close()

		// A client gone while the upstream works on its upload: cancelled.
		slowBody, slowCT := uploadForm("file", 64<<10, "model", "gpt-slow")
		slowHits := slow.hits.Load()
		c = sendUpload(t, tg, slowCT, slowBody, len(slowBody))
		waitFor(t, "the upload to reach the slow upstream", func() bool { return slow.hits.Load() > slowHits })
		c.Close()
		select {
		case <-cancelled:
		case <-time.After(3 * time.Second):
			t.Error("the slow upstream's request was not cancelled")
		}

		// An upstream that takes 8 MiB of upload without reading it: 504.
		hang, hangCT := uploadForm("file", 8<<20, "model", "gpt-hung")
		start := time.Now()
		resp, b := post(hang, hangCT)
		checkError(t, resp, b, 504, "upstream_timeout")
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the hung upload took %v", d)
		}
		hung.release() // the upstream gives up too
		if n := up.hits.Load(); n != hits {
			t.Errorf("%d uploads cut short reached the upstream", n-hits)
		}
	}
	// A first round starts what outlives a request (server workers, the
	// upstream clients' idle-connection cleaners); a second must leave
	// nothing more.
	round()
	time.Sleep(100 * time.Millisecond)
	// No collection, whose finalizers would close a file left open.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	round()
	waitFor(t, fmt.Sprintf("goroutines back to %d", goroutines), func() bool { return runtime.NumGoroutine() <= goroutines })
	waitFor(t, fmt.Sprintf("open files back to %d", fds), func() bool { return openFDs(t) <= fds })
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// sendUpload sends the headers of an upload of body and its first n bytes
// on a connection of its own, and returns it.
func sendUpload(t *testing.T, tg *testGateway, ct string, body []byte, n int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\n"+
		"Content-Length: %d\r\n\r\n", clientKey, ct, len(body))
	c.Write(body[:n])
	return c
}
