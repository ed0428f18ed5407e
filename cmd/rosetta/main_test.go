package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binary builds the rosetta command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rosetta")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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
	bin := binary(t)
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
	bin := binary(t)
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
