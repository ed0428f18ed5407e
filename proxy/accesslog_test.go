package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/internal/proctime"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// accessExchanges are exchanges as finish sees them, with every optional
// attribute on and off, and strings that need escaping or quoting.
func accessExchanges() []*exchange {
	full := &exchange{
		id: []byte("req_0123456789abcdef01234567"), endpoint: "chat", status: 200,
		elapsed: 1234567 * time.Nanosecond, ttfb: 890 * time.Microsecond,
		key:   &Key{ID: 42, Name: `team "a" = b\c`},
		model: "gpt-4o-mini", stream: true, channel: "oa primary", attempts: 2,
		usage: codec.Usage{Input: 12, Output: 345, CachedInput: 6, Reasoning: 7, Estimated: true},
	}
	return []*exchange{
		full,
		{id: []byte("abc"), endpoint: "healthz", status: 200, elapsed: 0},
		{id: []byte("x-1"), endpoint: "chat", status: 401, elapsed: 3 * time.Second, errMsg: "invalid key"},
		{id: []byte("x-2"), endpoint: "messages", status: 502, elapsed: 61*time.Minute + 1500*time.Millisecond,
			key: &Key{Name: "k"}, model: "m\u00e9\u2028", channel: "c", attempts: 1, ttfb: 999,
			errMsg: "upstream said:\n\t\"bad\" \x01\x7f <tag> & \xff\xfe done \u00a0\u200b",
			usage:  codec.Usage{Input: 1}},
		{id: []byte("x-3"), endpoint: "chat", status: 200, elapsed: 250 * time.Microsecond,
			key: &Key{Name: ""}, model: "=", channel: "", attempts: 1, ttfb: -5 * time.Millisecond},
		withUnits(),
	}
}

// keptEscaped are accessExchanges with the names' JSON forms the gateway
// keeps beside them (a key's, a route's, a channel's), which the JSON line
// writes as they are.
func keptEscaped() []*exchange {
	xs := accessExchanges()
	for _, x := range xs {
		if x.key != nil {
			x.key.escaped = escapeName(x.key.Name)
		}
		if x.model != "" {
			x.route = &route{public: x.model, escaped: escapeName(x.model)}
		}
		x.channelEscaped = escapeName(x.channel)
	}
	return xs
}

// withUnits is a speech request answered, with the characters it read.
func withUnits() *exchange {
	return &exchange{id: []byte("x-4"), endpoint: "audio.speech", status: 200, elapsed: time.Second, op: opSpeech,
		key: &Key{Name: "k"}, model: "tts-1", channel: "c", attempts: 1, units: 42}
}

// TestAccessLogUnits: a request with units other than tokens logs them
// with their unit, as its usage row has them; the others log neither.
func TestAccessLogUnits(t *testing.T) {
	now := time.Now()
	f := func(x *exchange, want string) {
		t.Helper()
		line := string(appendTextLine(nil, x, now))
		if want == "" && strings.Contains(line, "unit") || !strings.Contains(line, want) {
			t.Errorf("line %q, want %q in it and no other unit", line, want)
		}
	}
	f(withUnits(), " units=42 unit=characters")
	refused := withUnits()
	refused.status = 429 // made nothing: no units
	f(refused, "")
	for _, x := range accessExchanges()[:4] {
		f(x, "")
	}
}

// slogLine is the line the slog path (logExchange) writes for x, with the
// time left out.
func slogLine(t *testing.T, x *exchange, text bool) string {
	t.Helper()
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	var h slog.Handler = slog.NewJSONHandler(&buf, opts)
	if text {
		h = slog.NewTextHandler(&buf, opts)
	}
	g := &Gateway{log: slog.New(h)}
	g.logExchange(x)
	return buf.String()
}

func TestAccessLogJSONMatchesSlog(t *testing.T) {
	now := time.Date(2026, 11, 24, 15, 4, 5, 123456789, time.UTC)
	for _, x := range append(accessExchanges(), keptEscaped()...) {
		line := string(appendJSONLine(nil, x, now))
		if !strings.HasSuffix(line, "}\n") || strings.Count(line, "\n") != 1 {
			t.Fatalf("not one line: %q", line)
		}
		var got, want map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if err := json.Unmarshal([]byte(slogLine(t, x, false)), &want); err != nil {
			t.Fatal(err)
		}
		if got["time"] != "2026-11-24T15:04:05.123456789Z" {
			t.Errorf("time %v", got["time"])
		}
		delete(got, "time")
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Errorf("line\n%s\nwant (slog)\n%s", gb, wb)
		}
	}
	// The fields, by name, of the full exchange.
	var m map[string]any
	if err := json.Unmarshal(appendJSONLine(nil, accessExchanges()[0], now), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"level": "INFO", "msg": "request", "id": "req_0123456789abcdef01234567",
		"endpoint": "chat", "status": 200.0, "latency": 1234567.0, "key": `team "a" = b\c`, "key_id": 42.0,
		"model": "gpt-4o-mini", "stream": true, "channel": "oa primary", "attempts": 2.0, "ttfb": 890000.0,
		"input_tokens": 12.0, "output_tokens": 345.0, "cached_tokens": 6.0, "reasoning_tokens": 7.0, "estimated": true,
	} {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
}

func TestAccessLogTextMatchesSlog(t *testing.T) {
	now := time.Date(2026, 11, 24, 15, 4, 5, 123456789, time.UTC)
	for _, x := range append(accessExchanges(), keptEscaped()...) {
		line := string(appendTextLine(nil, x, now))
		const stamp = "time=2026-11-24T15:04:05.123Z "
		if !strings.HasPrefix(line, stamp) {
			t.Fatalf("time: %q", line)
		}
		if want := slogLine(t, x, true); line[len(stamp):] != want {
			t.Errorf("line\n%q\nwant (slog)\n%q", line[len(stamp):], want)
		}
	}
}

func TestAppendDuration(t *testing.T) {
	ds := []time.Duration{0, 1, -1, 999, 1000, 1001, 1500, 999999, time.Millisecond, 1234567,
		time.Second, 1500 * time.Millisecond, 59 * time.Second, time.Minute, 61*time.Minute + 1,
		100 * time.Hour, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for i := range 2000 {
		ds = append(ds, time.Duration(uint64(i)*0x9E3779B97F4A7C15>>uint(i%64)))
	}
	for _, d := range ds {
		if got := string(appendDuration(nil, d)); got != d.String() {
			t.Errorf("%d: %q, want %q", int64(d), got, d.String())
		}
	}
}

func TestAccessLogAllocs(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		l := newAccessLog(io.Discard, format)
		for _, x := range []*exchange{accessExchanges()[0], withUnits()} {
			var buf []byte
			testutil.Allocs(t, format+" line of "+string(x.id), 0, func() { buf = l.write(buf, x, time.Now()) })
		}
	}
}

// BenchmarkAccessLog is one access line: by hand, and through slog as
// before (the same attributes, a handler over the same kind of sink).
// cpu-ns/op, the process's CPU time a line, is less disturbed by a busy
// machine than ns/op.
func BenchmarkAccessLog(b *testing.B) {
	x := keptEscaped()[0] // with the names' JSON forms, as the gateway keeps them
	x.key.Name, x.channel = "team-a", "oa"
	x.key.escaped, x.channelEscaped = x.key.Name, x.channel
	for _, format := range []string{"json", "text"} {
		b.Run("hand-"+format, func(b *testing.B) {
			l := newAccessLog(io.Discard, format)
			var buf []byte
			now := time.Now()
			b.ReportAllocs()
			before := proctime.CPU()
			for b.Loop() {
				buf = l.write(buf, x, now)
			}
			b.ReportMetric(float64(proctime.CPU()-before)/float64(b.N), "cpu-ns/op")
		})
		b.Run("slog-"+format, func(b *testing.B) {
			var h slog.Handler = slog.NewJSONHandler(io.Discard, nil)
			if format == "text" {
				h = slog.NewTextHandler(io.Discard, nil)
			}
			g := &Gateway{log: slog.New(h)}
			b.ReportAllocs()
			for b.Loop() {
				g.logExchange(x)
			}
		})
	}
}
