package main

import (
	"bufio"
	"bytes"
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

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

// TestServeDemoAndSIGTERM runs the binary as `make run` does, uses the
// printed key on the demo channel, and stops it with SIGTERM while a stream
// is open: the stream must finish and the process exit 0.
func TestServeDemoAndSIGTERM(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "ROSETTA_LISTEN="+addr)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	key := ""
	sc := bufio.NewScanner(stdout)
	for key == "" && sc.Scan() {
		key = regexp.MustCompile(`^\s+(sk-rosetta-\S+)$`).FindString(sc.Text())
	}
	key = strings.TrimSpace(key)
	if key == "" {
		t.Fatalf("no key printed; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)

	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello there"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || !bytes.HasSuffix(rest, []byte("data: [DONE]\n\n")) || !bytes.Contains(rest, []byte(`"finish_reason":"stop"`)) {
		t.Fatalf("stream cut by SIGTERM (%v):\n%s", err, rest)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after SIGTERM")
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Errorf("no orderly stop in the log:\n%s", stderr.String())
	}
}

// start runs the binary with the config file and environment and returns
// its base URL once it answers.
func start(t *testing.T, config string, env ...string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "-config", config)
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
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"over TLS"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
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
}
