package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runBin runs the binary to its end and returns stdout, stderr and the exit
// status.
func runBin(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("rosetta %q still running after 30s\nstdout:\n%s\nstderr:\n%s", args, o.String(), e.String())
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// -h and --help print the command's usage and exit 0, on every command;
// a bad flag exits 2 with the usage on stderr.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"help"},
		{"serve", "-h"}, {"serve", "--help"}, {"serve", "-config", "x.yaml", "-h"},
		{"version", "-h"},
		{"admin", "-h"}, {"admin", "reset-password", "-h"}, {"admin", "reset-password", "--help"},
		{"admin", "reset-password", "bob", "-h"},
	} {
		stdout, stderr, code := runBin(t, t.TempDir(), nil, args...)
		if code != 0 || !strings.HasPrefix(stdout, "usage: rosetta") || stderr != "" {
			t.Errorf("rosetta %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, "help requested") {
			t.Errorf("rosetta %q reports help as an error:\n%s%s", args, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"serve", "-bogus"}, {"admin", "reset-password", "-bogus"}, {"admin"}, {"nope"}, {"serve", "extra"}} {
		stdout, stderr, code := runBin(t, t.TempDir(), nil, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "usage: rosetta") {
			t.Errorf("rosetta %q: exit %d, want 2 with the usage on stderr\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
}

// A second gateway on a busy port names the address and where to choose
// another.
func TestBusyPortSaysWhereToSetTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{[]string{"ROSETTA_LISTEN=" + addr}, nil},
		{[]string{"ROSETTA_LISTEN=" + freeAddr(t)}, []string{"-listen", addr}},
	} {
		_, stderr, code := runBin(t, t.TempDir(), c.env, append([]string{"serve"}, c.args...)...)
		want := "rosetta: cannot listen on " + addr + ": bind: address already in use (set server.listen in the config, ROSETTA_LISTEN, or -listen)"
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("serve %q with %q on a busy port: exit %d, want 1 and %q in:\n%s", c.args, c.env, code, want, stderr)
		}
	}
}

// -listen wins over ROSETTA_LISTEN (which wins over the config's
// server.listen), and the banner's addresses follow it.
func TestListenFlagWins(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte("server: {listen: '"+freeAddr(t)+"'}\nchannels:\n  - {name: demo, type: demo, models: [demo]}\n"), 0o600)
	flagAddr := freeAddr(t)
	r := startDemo(t, dir, "-config", config, "-listen", flagAddr) // ROSETTA_LISTEN is r.addr
	if !strings.Contains(r.banner, "serving on http://"+flagAddr+" ") || !strings.Contains(r.banner, "Console: http://"+flagAddr+"/console/") {
		t.Errorf("the banner does not show the -listen address %s:\n%s", flagAddr, r.banner)
	}
	resp, err := http.Get("http://" + flagAddr + "/healthz")
	if err != nil {
		t.Fatalf("nothing on the -listen address: %v", err)
	}
	resp.Body.Close()
	if c, err := net.Dial("tcp", r.addr); err == nil {
		c.Close()
		t.Errorf("something listens on ROSETTA_LISTEN's %s", r.addr)
	}
	r.stop(t)
}
