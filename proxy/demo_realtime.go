package proxy

import (
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"
	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/codec"
)

// The demo's realtime sessions: a small, deterministic subset of OpenAI's
// Realtime API, text only. On connect the demo sends session.created; it
// answers session.update with session.updated (the fields it got merged
// into the session), conversation.item.create with conversation.item.created,
// and response.create with response.created, the reply to the last user
// message as one text delta a word at the demo's pace, the text's done
// event and response.done with the usage. Audio (binary messages and
// input_audio_buffer.append) is ignored; any other event gets an error
// event. With OpenAI-Beta: realtime=v1 the text events have the beta's
// names (response.text.delta), else the GA's (response.output_text.delta).
// A client's close is answered with its code, at once, even mid-reply.

// demoQueue is how many client events the demo holds while it replies.
const demoQueue = 64

// realtime accepts the session's WebSocket upgrade.
func (d *demoUpstream) realtime(ctx *fasthttp.RequestCtx) {
	s := &demoSession{d: d, text: "response.output_text", session: map[string]any{
		"id": "sess_demo", "object": "realtime.session", "model": string(ctx.QueryArgs().Peek("model")),
		"output_modalities": []string{"text"}}}
	if string(ctx.Request.Header.Peek("OpenAI-Beta")) == "realtime=v1" {
		s.text = "response.text"
	}
	u := websocket.FastHTTPUpgrader{CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}
	u.Upgrade(ctx, s.run) //nolint:errcheck // the upgrader answered the error
}

// demoSession is one realtime session of the demo model.
type demoSession struct {
	d       *demoUpstream
	c       *websocket.Conn
	text    string         // the text events' prefix
	session map[string]any // what session.created and session.updated show
	ids     int            // the last id handed out
	said    int            // bytes of the conversation, for the input tokens
	last    string         // the last user message
	prev    any            // the last item's id, nil before the first
	gone    chan struct{}  // closed when the client's side has ended
}

// run serves the session: a goroutine reads the client's events, so that
// a close is answered while a reply is paced, and this one answers them.
func (s *demoSession) run(c *websocket.Conn) {
	s.c, s.gone = c, make(chan struct{})
	events, stop := make(chan []byte, demoQueue), make(chan struct{})
	defer close(stop)
	go func() {
		defer close(s.gone)
		for {
			typ, msg, err := c.ReadMessage() // a close is answered with its code
			if err != nil {
				return
			}
			if typ != websocket.TextMessage {
				continue
			}
			select {
			case events <- msg:
			case <-stop:
				return
			}
		}
	}()
	ok := s.send("session.created", map[string]any{"session": s.session})
	for ok {
		select {
		case msg := <-events:
			ok = s.answer(msg)
		case <-s.gone:
			ok = false
		}
	}
	c.Close() //nolint:errcheck // ends the reader
}

// answer answers a client event; false once the client is gone.
func (s *demoSession) answer(msg []byte) bool {
	var ev struct {
		Type    string         `json:"type"`
		EventID string         `json:"event_id"`
		Session map[string]any `json:"session"`
		Item    struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	}
	if err := sonic.Unmarshal(msg, &ev); err != nil {
		return s.fail(ev.EventID, "", "demo: the event is not JSON: "+err.Error())
	}
	switch ev.Type {
	case "session.update":
		for k, v := range ev.Session {
			if k != "id" && k != "object" && k != "model" {
				s.session[k] = v
			}
		}
		return s.send("session.updated", map[string]any{"session": s.session})
	case "conversation.item.create":
		var text []string
		for _, p := range ev.Item.Content {
			text = append(text, p.Text)
		}
		if ev.Item.Role == "user" {
			s.last = strings.Join(text, " ")
			s.said += len(s.last)
		}
		prev := s.prev
		s.prev = s.id("item")
		item := map[string]any{"id": s.prev, "object": "realtime.item", "type": ev.Item.Type,
			"role": ev.Item.Role, "status": "completed", "content": ev.Item.Content}
		return s.send("conversation.item.created", map[string]any{"previous_item_id": prev, "item": item})
	case "response.create":
		return s.respond()
	case "input_audio_buffer.append": // the demo does not listen
		return true
	default:
		return s.fail(ev.EventID, "type", "demo: the demo answers session.update, conversation.item.create and response.create")
	}
}

// respond sends the reply to the last user message, a word a delta.
func (s *demoSession) respond() bool {
	words := demoReply(s.last)
	reply := strings.Join(words, "")
	rid, iid := s.id("resp"), s.id("item")
	s.prev = iid
	resp := map[string]any{"id": rid, "object": "realtime.response", "status": "in_progress", "output": []any{}}
	if !s.send("response.created", map[string]any{"response": resp}) {
		return false
	}
	at := map[string]any{"response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0}
	for _, w := range words {
		select {
		case <-time.After(s.d.pace):
		case <-s.gone:
			return false
		}
		at["delta"] = w
		if !s.send(s.text+".delta", at) {
			return false
		}
	}
	delete(at, "delta")
	at["text"] = reply
	if !s.send(s.text+".done", at) {
		return false
	}
	in, out := codec.EstimateText(s.said), len(words)
	s.said += len(reply)
	resp["status"] = "completed"
	resp["output"] = []any{map[string]any{"id": iid, "object": "realtime.item", "type": "message", "role": "assistant",
		"status": "completed", "content": []any{map[string]any{"type": "output_text", "text": reply}}}}
	resp["usage"] = map[string]any{"total_tokens": in + out, "input_tokens": in, "output_tokens": out,
		"input_token_details":  map[string]int{"text_tokens": in, "audio_tokens": 0, "cached_tokens": 0},
		"output_token_details": map[string]int{"text_tokens": out, "audio_tokens": 0}}
	return s.send("response.done", map[string]any{"response": resp})
}

// fail sends an error event for the client's event eventID.
func (s *demoSession) fail(eventID, param, msg string) bool {
	return s.send("error", map[string]any{"error": map[string]any{"type": "invalid_request_error",
		"code": "invalid_value", "param": param, "message": msg, "event_id": eventID}})
}

// id hands out the next id with prefix: item_demo_1, resp_demo_2, ….
func (s *demoSession) id(prefix string) string {
	s.ids++
	return prefix + "_demo_" + strconv.Itoa(s.ids)
}

// send writes an event: its type and id first, then fields, keys sorted.
func (s *demoSession) send(typ string, fields map[string]any) bool {
	body, _ := sonic.ConfigStd.Marshal(fields)
	b := make([]byte, 0, len(body)+64)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","event_id":"`...)
	b = append(b, s.id("event")...)
	b = append(b, '"')
	if len(body) > 2 {
		b = append(b, ',')
	}
	b = append(b, body[1:]...)
	return s.c.WriteMessage(websocket.TextMessage, b) == nil
}
