package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/pgtest"
	"github.com/rosetta-gateway/rosetta/store"
)

var bin string // the rosetta command, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rosetta-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "rosetta")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestBadConfigFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rosetta.yaml")
	os.WriteFile(path, []byte("channels:\n  - name: a\n    type: nope\n    models: [m]\n"), 0o600)
	out, err := exec.Command(bin, "serve", "-config", path).CombinedOutput()
	var exit *exec.ExitError
	if err == nil || !errorsAs(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("bad config: err %v, want a non-zero exit", err)
	}
	if !strings.Contains(string(out), path+": channels[0].type: unknown type \"nope\"") {
		t.Fatalf("message does not name the file, field and problem:\n%s", out)
	}
}

// A store that cannot be reached stops the start with a message that says
// so, instead of a gateway that serves without keys or usage.
func TestUnreachableStoreFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rosetta.yaml")
	dsn := "postgres://rosetta:pg-secret-pw@" + freeAddr(t) + "/rosetta?connect_timeout=5"
	os.WriteFile(path, []byte("server: {listen: "+freeAddr(t)+"}\nstore: {driver: postgres, dsn: '"+dsn+"'}\n"), 0o600)
	cmd := exec.Command(bin, "serve", "-config", path)
	cmd.Env = append(os.Environ(), "ROSETTA_SECRET_KEY=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err == nil || !errorsAs(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("unreachable store: err %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "rosetta: cannot open the store:") || !strings.Contains(string(out), "refused") {
		t.Fatalf("the message does not say the store is unreachable:\n%s", out)
	}
	if strings.Contains(string(out), "pg-secret-pw") {
		t.Fatalf("the message shows the database password:\n%s", out)
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

// demoRun is the binary started as `make run` starts it: no config, in a
// fresh working directory (where the default SQLite store goes).
type demoRun struct {
	cmd    *exec.Cmd
	addr   string
	key    string       // the key printed for the run
	banner string       // stdout up to the key
	stderr bytes.Buffer // read it only after the process ended
}

func startDemo(t *testing.T, dir string, args ...string) *demoRun {
	t.Helper()
	r := &demoRun{addr: freeAddr(t)}
	r.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), "ROSETTA_LISTEN="+r.addr)
	stdout, _ := r.cmd.StdoutPipe()
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	var banner strings.Builder
	sc := bufio.NewScanner(stdout)
	for r.key == "" && sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		r.key = strings.TrimSpace(regexp.MustCompile(`^\s+(sk-rosetta-\S+)$`).FindString(sc.Text()))
	}
	if r.key == "" {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		t.Fatalf("no key printed; stderr:\n%s", r.stderr.String())
	}
	r.banner = banner.String()
	go io.Copy(io.Discard, stdout)
	return r
}

// stop sends SIGTERM and waits for a clean exit.
func (r *demoRun) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, r.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after SIGTERM")
	}
}

// streamThroughSIGTERM opens a demo stream, sends SIGTERM after its first
// event, and checks that the stream still finishes and the process exits 0.
// It returns the stream's request id.
func (r *demoRun) streamThroughSIGTERM(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+r.addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello there"}]}`))
	req.Header.Set("Authorization", "Bearer "+r.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil || !bytes.HasSuffix(rest, []byte("data: [DONE]\n\n")) || !bytes.Contains(rest, []byte(`"finish_reason":"stop"`)) {
		t.Fatalf("stream cut by SIGTERM (%v):\n%s", err, rest)
	}
	r.stop(t)
	if logs := r.stderr.String(); !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("no orderly stop in the log:\n%s", logs)
	}
	return resp.Header.Get("X-Request-Id")
}

// TestServeDemoAndSIGTERM runs the binary as `make run` does: a banner
// with the console's address and a key, the admin password printed once,
// the key working on the demo channel, and SIGTERM letting an open stream
// finish.
func TestServeDemoAndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	r := startDemo(t, dir)
	if !strings.Contains(r.banner, "Console: http://"+r.addr+"/console/") {
		t.Errorf("no console URL in the banner:\n%s", r.banner)
	}
	r.streamThroughSIGTERM(t)
	checkAdminPassword(t, r.stderr.String())

	// The next start finds the admin and prints no password.
	r = startDemo(t, dir)
	r.stop(t)
	if strings.Contains(r.stderr.String(), "first start") {
		t.Errorf("a password printed again on the second start:\n%s", r.stderr.String())
	}
}

// TestSIGTERMWritesTheLastUsage: the usage row of a stream that ends
// during the shutdown is in the store when the process has exited. Rows
// would otherwise wait up to usage_flush, here an hour, so only the flush
// at shutdown can have written it.
func TestSIGTERMWritesTheLastUsage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rosetta.yaml"), []byte(`
store: {usage_flush: 1h}
channels:
  - {name: demo, type: demo, models: [demo], pace: 10ms}
`), 0o600)
	r := startDemo(t, dir, "-config", "rosetta.yaml")
	id := r.streamThroughSIGTERM(t)
	rows := storedUsage(t, filepath.Join(dir, "rosetta.db"))
	if len(rows) != 1 || rows[0].KeyName != "demo" || rows[0].Model != "demo" || rows[0].Status != 200 ||
		rows[0].Output == 0 || rows[0].RequestID != id || rows[0].ClientStyle != "openai" {
		t.Fatalf("usage after SIGTERM: %+v", rows)
	}
}

// checkAdminPassword: the first start prints the generated admin password
// once, outside the JSON log lines.
func checkAdminPassword(t *testing.T, stderr string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^    ([A-Za-z0-9]{16,})$`).FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stderr, "first start") {
		t.Fatalf("no admin password printed:\n%s", stderr)
	}
	if n := strings.Count(stderr, m[1]); n != 1 {
		t.Fatalf("the admin password appears %d times on stderr", n)
	}
}

// storedUsage reads the usage log of the SQLite store at path.
func storedUsage(t *testing.T, path string) []store.Usage {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Usage(context.Background(), store.UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// start runs the binary with the config file and environment and returns
// its base URL once it answers.
func start(t *testing.T, config string, env ...string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "-config", config)
	cmd.Dir = t.TempDir() // for a default store
	cmd.Env = append(append(os.Environ(), "ROSETTA_LISTEN="+addr), env...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start:\n%s", logs.String())
		}
	}
}

// TestTLSUpstream: a real upstream is HTTPS; the system trust store (here
// extended with SSL_CERT_FILE) verifies it.
func TestTLSUpstream(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-up-0123456789" {
			w.WriteHeader(400)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"over TLS"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, text := range []string{"streamed", " over", " TLS"} {
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", text)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})
	os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o600)
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte(`
channels:
  - {name: tls, type: openai, base_url: "`+up.URL+`/v1", api_keys: [sk-up-0123456789], models: [gpt-4o-mini]}
keys:
  - {name: app, key: sk-app-0123456789abcdef}
`), 0o600)
	base := start(t, config, "SSL_CERT_FILE="+filepath.Join(dir, "ca.pem"))
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-app-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("over TLS")) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}

	// A stream over TLS: the relay's reads go through the TLS layer.
	req, _ = http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-app-0123456789abcdef")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var text string
	for _, m := range regexp.MustCompile(`"content":"([^"]*)"`).FindAllSubmatch(body, -1) {
		text += string(m[1])
	}
	if resp.StatusCode != 200 || text != "streamed over TLS" || !bytes.HasSuffix(body, []byte("data: [DONE]\n\n")) {
		t.Fatalf("%d %q\n%s", resp.StatusCode, text, body)
	}
}
