package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// mediaFileSize is the size of the upload and of the download
// TestMediaPeakMemory sends through the gateway.
const mediaFileSize = 50 << 20

// TestMediaPeakMemory runs the binary as it ships, in front of an upstream
// in this process, and reads its peak RSS (VmHWM) before and after a 50 MB
// transcription upload, and in another process a 50 MB speech download,
// each sent with the official client: each raises it by less than 10 MiB,
// the upload reaching the upstream whole (spooled to a temporary file,
// gone afterwards) and the audio the client whole.
func TestMediaPeakMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	var uploaded atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/audio/transcriptions":
			n, _ := io.Copy(io.Discard, r.Body)
			uploaded.Store(n)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"text":"%d bytes heard"}`, n)
		case "/v1/audio/speech":
			var req struct{ Input string }
			json.NewDecoder(r.Body).Decode(&req)
			n, _ := strconv.Atoi(req.Input) // the size asked for
			w.Header().Set("Content-Type", "audio/mpeg")
			chunk := make([]byte, 32<<10)
			for sent := 0; sent < n; sent += len(chunk) {
				w.Write(chunk[:min(len(chunk), n-sent)])
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer up.Close()
	tmp := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "rosetta.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`store: {dsn: %s}
channels:
  - {name: up, type: openai, base_url: "%s/v1", api_keys: [sk-up], models: [whisper-1, tts-1]}
keys:
  - {name: app, key: sk-media-0123456789abcdef, models: ["*"]}
`, filepath.Join(t.TempDir(), "rosetta.db"), up.URL)), 0o600)
	ctx := context.Background()
	// Each call in a gateway of its own, started and warmed with a small
	// upload and download: an earlier peak would hide a later one.
	measure := func(what string, call func(client openai.Client, size int)) {
		t.Helper()
		gw := &gatewayProcess{addr: freeAddr(t), config: cfg, env: []string{"TMPDIR=" + tmp}}
		gw.start(t)
		defer gw.kill()
		client := openai.NewClient(option.WithBaseURL(gw.url()+"/v1"), option.WithAPIKey("sk-media-0123456789abcdef"),
			option.WithMaxRetries(0))
		call(client, 4<<10)
		call(client, 64<<10)
		resetPeakRSS(t, gw) // the start's peak (the store's migrations) would hide the call's
		before := peakRSS(t, gw)
		call(client, mediaFileSize)
		d := peakRSS(t, gw) - before
		t.Logf("a 50 MB %s raised the gateway's peak RSS by %.2f MiB (from %.1f MiB)", what, mib(d), mib(before))
		if d >= 10<<20 {
			t.Errorf("a 50 MB %s raised the gateway's peak RSS by %.1f MiB", what, mib(d))
		}
	}
	measure("transcription upload", func(client openai.Client, size int) {
		t.Helper()
		r, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "whisper-1",
			File: openai.File(io.LimitReader(zeros{}, int64(size)), "call.wav", "audio/wav")})
		if err != nil || !strings.HasSuffix(r.Text, " bytes heard") || uploaded.Load() < int64(size) {
			t.Fatalf("transcription of %d bytes: %+v %v (the upstream got %d)", size, r, err, uploaded.Load())
		}
	})
	measure("speech download", func(client openai.Client, size int) {
		t.Helper()
		resp, err := client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "tts-1", Input: strconv.Itoa(size),
			Voice: alloyVoice})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != int64(size) {
			t.Fatalf("speech: %d bytes of %d, %v", n, size, err)
		}
	})
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

var alloyVoice = openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// resetPeakRSS sets the gateway process's peak RSS to its RSS now
// (proc(5): clear_refs, "5").
func resetPeakRSS(t *testing.T, p *gatewayProcess) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}

// peakRSS is the gateway process's peak resident set size so far (VmHWM).
func peakRSS(t *testing.T, p *gatewayProcess) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
