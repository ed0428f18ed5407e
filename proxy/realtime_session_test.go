package proxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRealtimeSessionUpdateModel: a client's session.update naming a
// model reaches the upstream with the session's upstream name in its place
// (the mapped name, or the session's own for any other name, so that the
// key's allow-list holds), its other bytes as they were; a session.update
// without a model, and other events that merely mention one, go byte for
// byte. session.updated shows the public name back.
func TestRealtimeSessionUpdateModel(t *testing.T) {
	up := newRTUpstream(t)
	tg, _ := realtimeGateway(t, up)
	for _, tc := range []struct {
		model string // the session's public model
		sent  []string
		want  []string // as the upstream gets them
	}{
		{"fast", []string{
			`{"type":"session.update","event_id":"e1","session":{"type":"realtime","model":"fast","instructions":"hi"}}`,
			`{ "session" : { "model" : "gpt-4o-mini-realtime" , "voice":"ash"}, "type" : "session.update" }`,
			`{"type":"session.update","session":{"instructions":"say \"model\": \"fast\""}}`,
			`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text",` +
				`"text":"{\"type\":\"session.update\",\"session\":{\"model\":\"x\"}}"}]},"session":{"model":"x"}}`,
		}, []string{
			`{"type":"session.update","event_id":"e1","session":{"type":"realtime","model":"gpt-4o-realtime","instructions":"hi"}}`,
			`{ "session" : { "model" : "gpt-4o-realtime" , "voice":"ash"}, "type" : "session.update" }`,
			`{"type":"session.update","session":{"instructions":"say \"model\": \"fast\""}}`,
			`{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text",` +
				`"text":"{\"type\":\"session.update\",\"session\":{\"model\":\"x\"}}"}]},"session":{"model":"x"}}`,
		}},
		{"gpt-4o-mini-realtime", []string{
			`{"type":"session.update","session":{"model":"gpt-4o-mini-realtime"}}`,
			`{"type":"session.update","session":{"model":"gpt-5-realtime-expensive"}}`,
		}, []string{
			`{"type":"session.update","session":{"model":"gpt-4o-mini-realtime"}}`,
			`{"type":"session.update","session":{"model":"gpt-4o-mini-realtime"}}`,
		}},
	} {
		c, _, err := dialRT(t, tg, tc.model, bearerHeader(clientKey))
		if err != nil {
			t.Fatal(err)
		}
		readEvent(t, c)
		for _, ev := range tc.sent {
			write(t, c, websocket.MessageText, ev)
			if !strings.Contains(ev, `"conversation.item.create"`) {
				if typ, msg := readEvent(t, c); typ != "session.updated" || !strings.Contains(string(msg), `"model":"`+tc.model+`"`) {
					t.Errorf("%s: answer %s", tc.model, msg)
				}
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
		<-up.done
		got := up.events()
		up.mu.Lock()
		up.texts = nil
		up.mu.Unlock()
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: the upstream got\n%s\nwant\n%s", tc.model, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// TestRealtimeTimeouts: a session with no message either way for the
// channel's idle timeout, and one kept busy past its total timeout, are
// ended as OpenAI ends a session past its maximum duration: an error
// event naming the reason (code session_idle_timeout or session_expired)
// and then 1001 with the reason, both ways; the access line has it.
func TestRealtimeTimeouts(t *testing.T) {
	up := newRTUpstream(t)
	tg, _ := realtimeGatewayWith(t, up, "timeouts: {idle: 300ms, total: 1200ms}")

	start := time.Now()
	c := openRT(t, tg)
	checkExpired(t, c, "session_idle_timeout", "The session was idle for 300ms.")
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("idle session closed after %v, want about 300ms", d)
	}
	<-up.done
	if _, _, _, end := up.seen(); websocket.CloseStatus(end) != websocket.StatusGoingAway {
		t.Errorf("upstream saw %v, want 1001", end)
	}

	start = time.Now()
	c = openRT(t, tg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // an echoed audio frame every 100ms keeps the session busy
		for ctx.Err() == nil && c.Write(ctx, websocket.MessageBinary, []byte("audio")) == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	checkExpired(t, c, "session_expired", "The session reached its time limit of 1.2s.")
	if d := time.Since(start); d < 1200*time.Millisecond || d > 3*time.Second {
		t.Errorf("busy session closed after %v, want about 1.2s", d)
	}
	<-up.done
	waitFor(t, "the access lines", func() bool {
		n := 0
		for _, l := range tg.accessLines(t) {
			if l["endpoint"] == "realtime" && (l["error"] == "The session was idle for 300ms." ||
				l["error"] == "The session reached its time limit of 1.2s.") {
				n++
			}
		}
		return n == 2
	})
}

// checkExpired reads a session's messages (binary ones skipped) until the
// error event, which must have code and message, and then the close, 1001
// with the message.
func checkExpired(t *testing.T, c *websocket.Conn, code, message string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("ended with %v before the error event", err)
		}
		if typ == websocket.MessageBinary {
			continue
		}
		var ev struct {
			Type  string
			Error struct{ Type, Code, Message string }
		}
		json.Unmarshal(msg, &ev)
		if ev.Type != "error" || ev.Error.Type != "invalid_request_error" || ev.Error.Code != code || ev.Error.Message != message {
			t.Fatalf("got %s, want an error event %s: %s", msg, code, message)
		}
		break
	}
	if ce := readClose(t, c); ce.Code != websocket.StatusGoingAway || ce.Reason != message {
		t.Errorf("closed with %v, want 1001 %s", ce, message)
	}
}
