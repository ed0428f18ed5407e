package asynclog

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// syncBuffer is a log read while it is written.
type syncBuffer = testutil.Buffer

func TestCloseFlushesEverything(t *testing.T) {
	var out syncBuffer
	w := New(&out, time.Hour, 1<<20)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				w.Write([]byte{'a' + byte(i), '\n'})
			}
		}()
	}
	wg.Wait()
	w.Close()
	if got := strings.Count(out.String(), "\n"); got != 800 {
		t.Fatalf("%d lines written, want 800", got)
	}
}

func TestIntervalFlushes(t *testing.T) {
	var out syncBuffer
	w := New(&out, 5*time.Millisecond, 1<<20)
	defer w.Close()
	w.Write([]byte("line\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() == "" {
		if time.Now().After(deadline) {
			t.Fatal("nothing written within 5s on a 5ms interval")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFullBufferDropsInsteadOfBlocking(t *testing.T) {
	block := make(chan struct{})
	w := New(writerFunc(func(p []byte) (int, error) { <-block; return len(p), nil }), time.Hour, 10)
	for range 10 {
		w.Write([]byte("12345678"))
	}
	if w.Dropped() == 0 {
		t.Fatal("a full buffer dropped nothing")
	}
	close(block)
	w.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestWritesAt64KiB: 64 KiB of pending lines are written at once, long
// before the interval, however large the limit; and the next 64 KiB too
// (each buffer the writer takes gets its own wake-up).
func TestWritesAt64KiB(t *testing.T) {
	var out syncBuffer
	w := New(&out, time.Hour, 4<<20)
	defer w.Close()
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for range 63 {
		w.Write(line)
	}
	time.Sleep(20 * time.Millisecond)
	if n := len(out.String()); n != 0 {
		t.Fatalf("%d bytes written with 63 KiB pending, want none before the interval", n)
	}
	w.Write(line)
	waitWritten(t, &out, 64<<10)
	for range 64 {
		w.Write(line)
	}
	waitWritten(t, &out, 128<<10)
}

// waitWritten waits up to 5 s for n bytes in out.
func waitWritten(t *testing.T, out *syncBuffer, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(out.String()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes written within 5s of %d pending, want %d", len(out.String()), n, n)
		}
		time.Sleep(time.Millisecond)
	}
}
