package proxy

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestHeadConnHandOff: a connection hands over the head it recorded only
// when the recording holds all the first server's read buffer held, and
// the second server reads that head again, then the socket.
func TestHeadConnHandOff(t *testing.T) {
	f := func(name string, reads [][]byte, recordFrom int, wantOK bool) {
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
			if _, err := io.ReadFull(c, buf[:len(r)]); err != nil {
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
	f("whole buffer in one read", [][]byte{head}, 0, true)
	f("whole buffer in three reads", [][]byte{head[:100], head[100:3000], head[3000:]}, 0, true)
	f("short of the buffer", [][]byte{head[:readBufferSize-1]}, 0, false)
	f("start read before the recording", [][]byte{head[:100], head[100:]}, 1, false)
	f("nothing recorded", [][]byte{head}, 1, false)
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
	if c.rec == nil || len(*c.rec) != 1000 {
		t.Fatalf("recorded %v, want 1000 bytes", c.rec)
	}
	io.ReadFull(c, buf) // past the read buffer's size: no head is that long
	if c.recording || c.rec != nil {
		t.Errorf("still recording past %d bytes", readBufferSize)
	}
	c.startRecording()
	io.ReadFull(c, buf[:10])
	c.stopRecording()
	if c.recording || c.rec != nil {
		t.Error("still recording after the handler ran")
	}
}
