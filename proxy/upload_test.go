package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// TestUploadLimit: the upload routes take bodies up to server.max_upload,
// larger than server.max_body, which still bounds every other route; a
// larger upload is a 413 in OpenAI's shape, refused on its Content-Length
// before its body is read, and no upstream is called.
func TestUploadLimit(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 1MiB", mediaChannel("up", up, ""), proxy.Options{})
	client := mediaClient(tg, new(clientBodies))
	ctx := context.Background()
	file := func(n int) *bytes.Reader { return bytes.NewReader(bytes.Repeat([]byte{'a'}, n)) }

	// Over max_body (64KiB), under max_upload.
	r, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "gpt-ears",
		File: openai.File(file(512<<10), "a.wav", "audio/wav")})
	if err != nil || r.Text != "Hello there." {
		t.Fatalf("%+v %v", r, err)
	}
	if n := len(up.lastRequest().body); n < 512<<10 {
		t.Fatalf("upstream got %d bytes", n)
	}
	hits := up.hits.Load()

	// Over max_upload, on every upload route.
	_, err = client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "gpt-ears",
		File: openai.File(file(2<<20), "a.wav", "audio/wav")})
	checkSDKError(t, err, 413, "request_too_large", "1MiB")
	_, err = client.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{Model: "gpt-ears",
		File: openai.File(file(2<<20), "a.wav", "audio/wav")})
	checkSDKError(t, err, 413, "request_too_large", "1MiB")
	_, err = client.Images.NewVariation(ctx, openai.ImageNewVariationParams{Model: "gpt-img",
		Image: openai.File(file(2<<20), "a.png", "image/png")})
	checkSDKError(t, err, 413, "request_too_large", "1MiB")
	_, err = client.Images.Edit(ctx, openai.ImageEditParams{Model: "gpt-img", Prompt: "a hat",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(file(2<<20), "a.png", "image/png")}})
	checkSDKError(t, err, 413, "request_too_large", "1MiB")

	// The JSON routes keep max_body, whatever their size against max_upload.
	big := `{"model":"gpt-img","prompt":"` + strings.Repeat("x", 100<<10) + `"}`
	resp, b := tg.do(t, "POST", "/v1/images/generations", clientKey, big)
	checkError(t, resp, b, 413, "request_too_large")
	if !strings.Contains(string(b), "64KiB") {
		t.Errorf("413 for a JSON body: %s", b)
	}

	// A Content-Length over the limit is answered at once, the body unsent.
	c, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n--b\r\n", clientKey, 200<<20)
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	checkError(t, resp, b, 413, "request_too_large")
	if !resp.Close {
		t.Error("the connection is kept after a refused body")
	}

	if n := up.hits.Load(); n != hits {
		t.Fatalf("%d refused uploads reached the upstream", n-hits)
	}
}

// TestBodyFarOverLimit: a body far over its limit (32 MiB against 64 KiB
// or 1 MiB), sent whole by a client that writes it before it reads, with a
// Content-Length or chunked, gets the 413 in the client's style naming its
// limit, not a connection reset: the gateway answers, ends its side and
// reads what still comes for a while before it closes. (A chunked body is
// refused once the limit's worth is read, when fasthttp has reset the
// request: its style and limit were kept aside.)
func TestBodyFarOverLimit(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 1MiB", mediaChannel("up", up, ""), proxy.Options{})
	huge := bytes.Repeat([]byte{'a'}, 32<<20)
	cases := []struct {
		style, path string
		header      map[string]string
		mark, limit string // of the style's error shape; named in the message
	}{
		{"openai", "/v1/embeddings", map[string]string{"Authorization": "Bearer " + clientKey}, `"code":"request_too_large"`, "64KiB"},
		{"openai upload", "/v1/audio/transcriptions", map[string]string{"Authorization": "Bearer " + clientKey,
			"Content-Type": "multipart/form-data; boundary=b"}, `"code":"request_too_large"`, "1MiB"},
		{"anthropic", "/v1/messages", map[string]string{"x-api-key": clientKey, "anthropic-version": "2023-06-01"},
			`"type":"error"`, "64KiB"},
		{"gemini", "/v1beta/models/gpt-4o-mini:generateContent?key=" + clientKey, nil, `"code":413`, "64KiB"},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			resp, b, err := postBody(tg.url+c.path, c.header, huge, chunked)
			if err != nil {
				t.Errorf("%s, chunked %v: %v", c.style, chunked, err)
				continue
			}
			if resp.StatusCode != 413 || !strings.Contains(string(b), c.mark) || !strings.Contains(string(b), "limit of "+c.limit) {
				t.Errorf("%s, chunked %v: %d %s", c.style, chunked, resp.StatusCode, b)
			}
		}
	}
	client := mediaClient(tg, new(clientBodies))
	_, err := client.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{Model: "gpt-ears",
		File: openai.File(bytes.NewReader(huge), "a.wav", "audio/wav")})
	checkSDKError(t, err, 413, "request_too_large", "1MiB")
	if n := up.hits.Load(); n != 0 {
		t.Errorf("%d refused bodies reached the upstream", n)
	}
}

// TestUploadSpooledFailover: an upload larger than what the gateway keeps
// in memory, the file before the model as the SDKs send it, goes to a
// first channel that fails and then to the next, each receiving the
// client's bytes exactly but the model's value, mapped; sent chunked, the
// same. No temporary file or descriptor is left (the connections kept
// open after the first upload aside).
func TestUploadSpooledFailover(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	bad := newMock(t, jsonReply(500, []byte(`{"error":{"message":"boom","type":"server_error"}}`)))
	good := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 16MiB", mediaChannel("bad", bad, ", priority: 0")+
		mediaChannel("good", good, ", priority: 1"), proxy.Options{})
	audio := make([]byte, 3<<20)
	for i := range audio {
		audio[i] = byte(i*7 + i>>12) // no run a delimiter could hide in
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, _ := w.CreateFormFile("file", "call.wav")
	f.Write(audio)
	w.WriteField("model", "gpt-ears")
	w.WriteField("response_format", "json")
	w.Close()
	body := b.Bytes()
	want := bytes.Replace(body, []byte("\r\n\r\ngpt-ears\r\n"), []byte("\r\n\r\nwhisper-1\r\n"), 1)
	// No collection, whose finalizers would close a file left open.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	fds := 0
	for i, chunked := range []bool{false, true, false} {
		if i == 1 { // once the connections are open
			fds = openFDs(t)
		}
		resp, got, err := postBody(tg.url+"/v1/audio/transcriptions",
			map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": w.FormDataContentType()}, body, chunked)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !strings.Contains(string(got), "Hello there.") {
			t.Fatalf("chunked %v: %d %s", chunked, resp.StatusCode, got)
		}
		for name, up := range map[string]*mockUpstream{"first": bad, "second": good} {
			last := up.lastRequest()
			if !bytes.Equal(last.body, want) || last.header.Get("Content-Type") != w.FormDataContentType() {
				t.Errorf("chunked %v: the %s channel got %d bytes (%s), want the client's %d with the model mapped",
					chunked, name, len(last.body), last.header.Get("Content-Type"), len(want))
			}
		}
	}
	if bad.hits.Load() != 3 || good.hits.Load() != 3 {
		t.Errorf("hits: first %d, second %d", bad.hits.Load(), good.hits.Load())
	}
	waitFor(t, fmt.Sprintf("open files back to %d", fds), func() bool { return openFDs(t) <= fds })
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestUploadRefusedUnread: an upload answered before its body is read (a
// wrong key, a body that is no form) gets its answer, however much of the
// body the client still sends, with a length or chunked: not a reset.
func TestUploadRefusedUnread(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 64MiB", mediaChannel("up", up, ""), proxy.Options{})
	body, ct := uploadForm("file", 16<<20, "model", "gpt-ears")
	for _, c := range []struct {
		name, key, ct string
		status        int
	}{
		{"wrong key", "sk-wrong-0123456789abcdef", ct, 401},
		{"not a form", clientKey, "application/json", 400},
	} {
		for _, chunked := range []bool{false, true} {
			resp, b, err := postBody(tg.url+"/v1/audio/transcriptions",
				map[string]string{"Authorization": "Bearer " + c.key, "Content-Type": c.ct}, body, chunked)
			if err != nil {
				t.Errorf("%s, chunked %v: %v", c.name, chunked, err)
				continue
			}
			checkError(t, resp, b, c.status, "")
		}
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("%d refused uploads reached the upstream", n)
	}
}

// postBody posts body with the headers, with its length or, chunked,
// without, and returns the answer and its body.
func postBody(url string, header map[string]string, body []byte, chunked bool) (*http.Response, []byte, error) {
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // no length: sent chunked
	}
	req, _ := http.NewRequest("POST", url, r)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestUploadSpoolUnwritable: an upload the gateway cannot spool (its
// temporary directory is gone) is a 500 in OpenAI's shape that names the
// request and not the directory, with no upstream called; one that fits in
// memory still goes through.
func TestUploadSpoolUnwritable(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 16MiB", mediaChannel("up", up, ""), proxy.Options{})
	small, smallCT := uploadForm("file", 1000, "model", "gpt-ears")
	if resp, b := rawForm(t, tg, "/v1/audio/transcriptions", small, smallCT); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	big, bigCT := uploadForm("file", 1<<20, "model", "gpt-ears")
	resp, b := rawForm(t, tg, "/v1/audio/transcriptions", big, bigCT)
	checkError(t, resp, b, 500, "")
	if !strings.Contains(string(b), "request id") || strings.Contains(string(b), "gone") {
		t.Errorf("500: %s", b)
	}
	if n := up.hits.Load(); n != 1 {
		t.Errorf("%d uploads reached the upstream, want the small one", n)
	}
}

// TestUploadLeftUnreadCounted: an upload refused mid-body leaves the
// connection open when what is still on the wire is no more than fasthttp
// drains by itself (256 KiB), counting every byte read from the
// connection, spooled or not: here the bytes of the read in which the form
// went wrong, after which exactly 256 KiB are left. A second request then
// goes on the same connection.
func TestUploadLeftUnreadCounted(t *testing.T) {
	up := mediaUpstream(t)
	tg := startGatewayServer(t, "  max_upload: 16MiB", mediaChannel("up", up, ""), proxy.Options{})
	// A delimiter followed by a space, which no form has, then 256 KiB.
	body := []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" +
		strings.Repeat("a", 100<<10) + "\r\n--b " + strings.Repeat("a", 256<<10))
	c, err := net.Dial("tcp", strings.TrimPrefix(tg.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		fmt.Fprintf(c, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n", clientKey, len(body))
		c.Write(body)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
	}()
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	checkError(t, resp, b, 400, "")
	if resp.Close {
		t.Fatal("the connection is closed with 256 KiB left, which fasthttp drains")
	}
	if resp, err = http.ReadResponse(r, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the next request on the connection: %v %v", resp, err)
	}
}

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
