package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/internal/proctime"
)

// BenchmarkRealtimeRelay is the gateway's cost per relayed realtime
// message, for each of relayedMessages: a session opened through the
// gateway (key, route, upstream dial, upgrade) on loopback TCP, its model
// mapped (so both pumps look at text messages), between a client and an
// upstream that write pre-framed messages and skip what they read without
// allocating. ns/op is per
// message, pipelined; cpu-ns/op the process's CPU time per message (the
// peers' included, a small share), steadier than ns/op on a busy
// machine; allocs/op are the process's per message, the peers' none.
func BenchmarkRealtimeRelay(b *testing.B) {
	rs := openBenchSession(b)
	defer rs.close()
	for _, m := range relayedMessages() {
		b.Run(m.name, func(b *testing.B) {
			src, dst, frames := rs.ends(m)
			b.SetBytes(int64(len(m.payload)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := proctime.CPU()
			if err := relayMessages(src, dst, frames, b.N); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(proctime.CPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRealtimeEventLook is what a session spends looking at a text
// message it passes on unchanged, each way, the model mapped (so the
// upstream's are looked at for session events too): a ~200-byte event
// and an 8 KiB one of base64 audio, the bulk of realtime traffic.
func BenchmarkRealtimeEventLook(b *testing.B) {
	s := &session{x: &exchange{model: "fast"}, upModel: "gpt-4o-realtime", rename: true, events: mappedEvents}
	for _, size := range []int{200, 8 << 10} {
		for _, dir := range []struct {
			name, typ, field string
			look             func([]byte) []byte
		}{
			{"client", "input_audio_buffer.append", "audio", s.fromClient},
			{"upstream", "response.output_audio.delta", "delta", s.fromUpstream},
		} {
			msg := audioEvent(dir.typ, dir.field, size)
			b.Run(fmt.Sprintf("%s-%dB", dir.name, size), func(b *testing.B) {
				b.SetBytes(int64(len(msg)))
				b.ReportAllocs()
				for b.Loop() {
					if out := dir.look(msg); len(out) != len(msg) {
						b.Fatalf("changed: %s", out)
					}
				}
			})
		}
	}
}

// audioEvent is a text event of type typ carrying base64 audio in field,
// size bytes long.
func audioEvent(typ, field string, size int) []byte {
	ev := `{"type":"` + typ + `","event_id":"event_Bx7Qm2","` + field + `":"`
	return []byte(ev + strings.Repeat("A", size-len(ev)-2) + `"}`)
}

// relayedMessage is a message the benchmark relays, and its direction.
type relayedMessage struct {
	name    string
	op      byte // websocket.TextMessage or BinaryMessage
	payload []byte
	up      bool // client to upstream, else upstream to client
}

// relayedMessages are a ~200-byte text event, a 4 KiB binary audio frame
// and an 8 KiB text event of base64 audio (what realtime mostly carries),
// each way.
func relayedMessages() []relayedMessage {
	audio := bytes.Repeat([]byte{0x12, 0x34}, 2048)
	return []relayedMessage{
		{"client-to-upstream/text-200B", websocket.TextMessage, audioEvent("input_audio_buffer.append", "audio", 200), true},
		{"client-to-upstream/binary-4KiB", websocket.BinaryMessage, audio, true},
		{"client-to-upstream/text-8KiB", websocket.TextMessage, audioEvent("input_audio_buffer.append", "audio", 8<<10), true},
		{"upstream-to-client/text-200B", websocket.TextMessage, audioEvent("response.output_audio.delta", "delta", 200), false},
		{"upstream-to-client/binary-4KiB", websocket.BinaryMessage, audio, false},
		{"upstream-to-client/text-8KiB", websocket.TextMessage, audioEvent("response.output_audio.delta", "delta", 8<<10), false},
	}
}

// frameBatch is how many messages the peers write at a time.
const frameBatch = 64

// ends are the session's ends m is written to and read from, and
// frameBatch copies of m framed as its writer sends it.
func (rs *benchSession) ends(m relayedMessage) (src, dst *frameReader, frames []byte) {
	src, dst, masked := rs.upstream, rs.client, false
	if m.up {
		src, dst, masked = rs.client, rs.upstream, true
	}
	return src, dst, bytes.Repeat(appendFrame(nil, m.op, m.payload, masked), frameBatch)
}

// relayMessages writes n messages from frames into src, from another
// goroutine, and skips them as they come out of dst.
func relayMessages(src, dst *frameReader, frames []byte, n int) error {
	sent := make(chan error, 1)
	go func() { sent <- writeFrames(src.conn, frames, n) }()
	if err := dst.skipMessages(n); err != nil {
		return err
	}
	return <-sent
}

// benchSession is a realtime session through a gateway, seen from its two
// ends as raw connections.
type benchSession struct {
	g                *Gateway
	upSrv            *httptest.Server
	client, upstream *frameReader
}

// frameReader skips WebSocket frames read from a connection.
type frameReader struct {
	conn net.Conn
	r    *bufio.Reader
	hdr  [14]byte
}

func openBenchSession(b testing.TB) *benchSession {
	b.Helper()
	upConn := make(chan net.Conn, 1)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			b.Error(err)
			return
		}
		upConn <- c.NetConn() // nothing was sent yet, so nothing is buffered
	}))
	g, addr := serveBenchGateway(b, upSrv.URL)
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/v1/realtime?model=fast",
		http.Header{"Authorization": {"Bearer sk-bench-0123456789abcdef"}})
	if err != nil {
		b.Fatal(err)
	}
	rs := &benchSession{g: g, upSrv: upSrv, client: newFrameReader(c.NetConn())}
	select {
	case up := <-upConn:
		rs.upstream = newFrameReader(up)
	case <-time.After(5 * time.Second):
		b.Fatal("the upstream was not dialed")
	}
	return rs
}

// serveBenchGateway serves, on a loopback address, a gateway whose model
// fast is the realtime upstream at upURL's gpt-4o-realtime, for the key
// sk-bench-0123456789abcdef; the caller shuts it down.
func serveBenchGateway(b testing.TB, upURL string) (g *Gateway, addr string) {
	b.Helper()
	cfg, err := config.Parse([]byte(`
channels:
  - {name: rt, type: openai, base_url: "`+upURL+`/v1", api_keys: [sk-up-0123456789], model_map: {fast: gpt-4o-realtime}}
keys:
  - {name: bench, key: sk-bench-0123456789abcdef}
`), "bench", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	g, err = New(cfg, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), AccessLog: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go g.Serve(ln) //nolint:errcheck
	return g, ln.Addr().String()
}

func newFrameReader(c net.Conn) *frameReader {
	return &frameReader{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (rs *benchSession) close() {
	rs.client.conn.Close()
	rs.upstream.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs.g.Shutdown(ctx) //nolint:errcheck
	rs.upSrv.Close()
}

// appendFrame appends a final frame of the message payload, masked (as a
// client sends it) or not.
func appendFrame(dst []byte, op byte, payload []byte, masked bool) []byte {
	dst = append(dst, 0x80|op)
	var maskBit byte
	if masked {
		maskBit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		dst = append(dst, maskBit|byte(n))
	case n <= 0xffff:
		dst = binary.BigEndian.AppendUint16(append(dst, maskBit|126), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint64(append(dst, maskBit|127), uint64(n))
	}
	if !masked {
		return append(dst, payload...)
	}
	key := [4]byte{0x5a, 0x17, 0xc3, 0x9e}
	dst = append(dst, key[:]...)
	for i, c := range payload {
		dst = append(dst, c^key[i%4])
	}
	return dst
}

// writeFrames writes n messages from frames, frameBatch equal ones.
func writeFrames(w io.Writer, frames []byte, n int) error {
	size := len(frames) / frameBatch
	for n > 0 {
		k := min(n, frameBatch)
		if _, err := w.Write(frames[:k*size]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// skipMessages reads frames until n data messages have ended.
func (fr *frameReader) skipMessages(n int) error {
	for n > 0 {
		if _, err := io.ReadFull(fr.r, fr.hdr[:2]); err != nil {
			return err
		}
		op, length := fr.hdr[0]&0x0f, int(fr.hdr[1]&0x7f)
		ext := 0
		switch length {
		case 126:
			ext = 2
		case 127:
			ext = 8
		}
		if fr.hdr[1]&0x80 != 0 {
			ext += 4 // the mask key
		}
		if _, err := io.ReadFull(fr.r, fr.hdr[2:2+ext]); err != nil {
			return err
		}
		switch length {
		case 126:
			length = int(binary.BigEndian.Uint16(fr.hdr[2:]))
		case 127:
			length = int(binary.BigEndian.Uint64(fr.hdr[2:]))
		}
		if _, err := fr.r.Discard(length); err != nil {
			return err
		}
		if fr.hdr[0]&0x80 != 0 && op < 8 { // a final frame, not a control one
			n--
		}
	}
	return nil
}
