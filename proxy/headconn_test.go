package proxy

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestHeadConnHandOff: a connection hands over the head it recorded only
// when the recording holds all the first server's read buffer held, and
// the second server reads that head again, then the socket. Each read
// lands in the server's buffer at its offset in offs, or -1: alone in a
// byte of its own, as fasthttp reads a request's first byte.
func TestHeadConnHandOff(t *testing.T) {
	f := func(name string, reads [][]byte, offs []int, recordFrom int, wantOK bool) {
		t.Helper()
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			for _, r := range reads {
				client.Write(r)
			}
			client.Write([]byte("rest"))
		}()
		c := &headConn{Conn: server}
		buf := make([]byte, readBufferSize)
		for i, r := range reads {
			if i == recordFrom {
				c.startRecording()
			}
			dst := make([]byte, 1)
			if offs[i] >= 0 {
				dst = buf[offs[i] : offs[i]+len(r)]
			}
			if _, err := io.ReadFull(c, dst); err != nil {
				t.Fatalf("%s: read %d: %v", name, i, err)
			}
		}
		r, ok := c.handOff()
		if ok != wantOK {
			t.Fatalf("%s: handOff ok = %t, want %t", name, ok, wantOK)
		}
		if !ok {
			c.stopRecording()
			return
		}
		want := bytes.Join(append(reads[recordFrom:], []byte("rest")), nil)
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: replayed %q (%v), want %q", name, got, err, want)
		}
		if n, err := c.Read(buf); n != 0 || err == nil {
			t.Errorf("%s: the moved connection still reads: %d, %v", name, n, err)
		}
		if n, err := c.Write([]byte("x")); n != 0 || err == nil {
			t.Errorf("%s: the moved connection still writes: %d, %v", name, n, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("%s: Close of the moved connection: %v", name, err)
		}
	}
	head := bytes.Repeat([]byte("h"), readBufferSize)
	f("whole buffer in one read", [][]byte{head}, []int{0}, 0, true)
	f("whole buffer in three reads", [][]byte{head[:100], head[100:3000], head[3000:]}, []int{0, 100, 3000}, 0, true)
	f("first byte alone", [][]byte{head[:1], head[1:]}, []int{-1, 1}, 0, true)
	f("short of the buffer", [][]byte{head[:readBufferSize-1]}, []int{0}, 0, false)
	f("start read before the recording", [][]byte{head[:100], head[100:]}, []int{0, 100}, 1, false)
	f("nothing recorded", [][]byte{head}, []int{0}, 1, false)
	f("first read past the buffer's start", [][]byte{head[:readBufferSize-100]}, []int{100}, 0, false)
	f("a read moved", [][]byte{head[:100], head[100:]}, []int{0, 0}, 0, false)
	f("two bytes alone", [][]byte{head[:1], head[1:2], head[2:]}, []int{-1, -1, 2}, 0, false)
}

// TestHeadConnRecordsOnlyTheHead: the recording stops (and its buffer
// goes back) at the handler, and when it would outgrow the read buffer.
func TestHeadConnRecordsOnlyTheHead(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go client.Write(bytes.Repeat([]byte("b"), 3*readBufferSize))
	c := &headConn{Conn: server, recording: true}
	buf := make([]byte, readBufferSize)
	io.ReadFull(c, buf[:1000])
	if !c.recording || len(c.read) != 1000 || c.rec != nil {
		t.Fatalf("followed %d bytes (copied: %t), want 1000, no copy", len(c.read), c.rec != nil)
	}
	io.ReadFull(c, buf[1000:])
	if c.rec == nil || !bytes.Equal(*c.rec, buf) {
		t.Fatalf("the full buffer was not copied")
	}
	io.ReadFull(c, buf[:10]) // past the read buffer's size: no head is that long
	if c.recording || c.rec != nil || c.read != nil {
		t.Errorf("still recording past %d bytes", readBufferSize)
	}
	c.startRecording()
	io.ReadFull(c, buf[:10])
	c.stopRecording()
	if c.recording || c.rec != nil || c.read != nil {
		t.Error("still recording after the handler ran")
	}
}
