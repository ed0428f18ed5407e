package proxy

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestDemoRealtimeClose: the demo answers a client's close with its code
// at once, even in the middle of a reply paced to last 20 seconds.
func TestDemoRealtimeClose(t *testing.T) {
	d := newDemoUpstream(time.Second)
	defer d.close()
	dl := websocket.Dialer{NetDialContext: func(context.Context, string, string) (net.Conn, error) { return d.dial() }}
	c, _, err := dl.Dial("ws://demo.invalid/v1/realtime?model=demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create"}`))
	for _, want := range []string{"session.created", "response.created", "response.output_text.delta"} {
		if _, msg, err := c.ReadMessage(); err != nil || !bytes.Contains(msg, []byte(`"type":"`+want+`"`)) {
			t.Fatalf("want %s, got %s, %v", want, msg, err)
		}
	}
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye"), time.Now().Add(time.Second))
	start := time.Now()
	for {
		_, msg, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != 4001 || time.Since(start) > 500*time.Millisecond {
				t.Errorf("closed with %d after %v, want 4001 at once", ce.Code, time.Since(start))
			}
			return
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if !bytes.Contains(msg, []byte(`"type":"response.output_text.delta"`)) {
			t.Fatalf("after the close: %s", msg)
		}
	}
}
