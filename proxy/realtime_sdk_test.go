package proxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/realtime"
)

// TestRealtimeSDK: the official SDK's own realtime client
// (client.Realtime.Connect of openai-go) through the gateway: it opens the
// session with its key and ?model=, reads typed session.created and
// session.updated with the public model, sends a typed session.update
// naming the public model, which the upstream gets with its own name,
// runs a text turn to its response.done with usage, and its Close reaches
// the upstream as 1000; the session is one usage row.
func TestRealtimeSDK(t *testing.T) {
	up := newRTUpstream(t)
	tg, rows := realtimeGateway(t, up)
	client := openai.NewClient(option.WithBaseURL(tg.url+"/v1"), option.WithAPIKey(clientKey), option.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := client.Realtime.Connect(ctx, realtime.RealtimeConnectionOptions{}, option.WithQuery("model", "fast"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Abort()
	recv := func(want string) realtime.RealtimeServerEventUnion {
		t.Helper()
		ev, err := conn.Recv(ctx)
		if err != nil || ev.Type != want {
			t.Fatalf("got %s (%v), want %s", ev.RawJSON(), err, want)
		}
		return ev
	}
	if m := recv("session.created").AsSessionCreatedEvent().Session.AsRealtimeSessionCreateRequest().Model; m != "fast" {
		t.Errorf("session.created shows model %q", m)
	}
	hdr, _, _, _ := up.seen()
	checkUpstreamKey(t, hdr)

	update := realtime.RealtimeSessionCreateRequestParam{Model: "fast", Instructions: openai.String("be brief")}
	if err := conn.Send(ctx, realtime.RealtimeClientEventParamOfSessionUpdate(update)); err != nil {
		t.Fatal(err)
	}
	if m := recv("session.updated").AsSessionUpdatedEvent().Session.AsRealtimeSessionCreateRequest().Model; m != "fast" {
		t.Errorf("session.updated shows model %q", m)
	}
	if evs := up.events(); len(evs) != 1 || !strings.Contains(evs[0], `"model":"gpt-4o-realtime"`) || strings.Contains(evs[0], `"fast"`) {
		t.Errorf("the upstream got %q", evs)
	}

	if err := conn.Send(ctx, realtime.RealtimeClientEventUnionParam{OfResponseCreate: &realtime.ResponseCreateEventParam{}}); err != nil {
		t.Fatal(err)
	}
	var text string
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "response.done" {
			if u := ev.AsResponseDoneEvent().Response.Usage; u.InputTokens != 20 || u.OutputTokens != 10 {
				t.Errorf("usage %+v", u)
			}
			break
		}
		var d struct{ Delta string } // the mock's beta event names: raw JSON
		json.Unmarshal([]byte(ev.RawJSON()), &d)
		text += d.Delta
	}
	if text != "Hello" {
		t.Errorf("text %q", text)
	}

	if err := conn.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	<-up.done
	if _, _, _, end := up.seen(); websocket.CloseStatus(end) != websocket.StatusNormalClosure {
		t.Errorf("upstream saw %v, want 1000", end)
	}
	waitFor(t, "the usage row", func() bool { return len(rows.all()) == 1 })
	if r := rows.all()[0]; r.Model != "fast" || r.Input != 20 || r.Output != 10 || r.Status != 101 {
		t.Errorf("usage row %+v", r)
	}
}
