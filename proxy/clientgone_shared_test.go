package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Two clients may send one X-Request-Id. One that leaves while it waits
// for a whole answer cancels no other request under the id: a stream, or
// another whole answer, completes intact. (The request of the one that
// left is cancelled by none either: an id two are under is watched for
// neither.)
func TestSharedRequestIDCancelsNoOther(t *testing.T) {
	for _, sc := range schemes {
		for _, other := range []string{"stream", "whole"} {
			t.Run(sc.name+"/"+other, func(t *testing.T) {
				otherIntact(t, sc.start, other == "stream")
			})
		}
	}
}

// sharedID is the X-Request-Id both clients send.
const sharedID = "client-chosen-0042"

// otherIntact has a client wait for a whole answer under sharedID, another
// client's request (a stream or not) go out under it, and the first leave;
// then the upstream answers both.
func otherIntact(t *testing.T, start mockStart, stream bool) {
	evs := events(fixture(t, "chat_stream.sse"))
	whole := fixture(t, "chat_response.json")
	release := make(chan struct{})
	up := start(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.Contains(string(body), `"stream":true`) {
			select {
			case <-release:
				jsonReply(200, whole)(w, r, body)
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.(http.Flusher).Flush()
		<-release
		for _, ev := range evs[1:] {
			w.Write(ev)
		}
	})
	tg := startGateway(t, channel("oa", up.baseURL(), ""))
	leaving := sendAlone(t, tg, "/v1/chat/completions",
		map[string]string{"Authorization": "Bearer " + clientKey, "X-Request-Id": sharedID}, miniBody)
	waitFor(t, "the leaving client's request at the upstream", func() bool { return up.hits.Load() == 1 })

	client := sdkClient(tg, option.WithHeader("X-Request-Id", sharedID))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if stream {
			checkStream(t, client, leaving)
		} else {
			checkWhole(t, client, whole)
		}
	}()
	if !stream {
		waitFor(t, "the other request at the upstream", func() bool { return up.hits.Load() == 2 })
		leaving.Close()
	}
	// The watcher looks at waiting clients every 250 ms: long enough for
	// it to have woken a read it should not.
	time.Sleep(800 * time.Millisecond)
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the other request never completed")
	}
}

// sdkClient is openai-go's client of the gateway, with the client key.
func sdkClient(tg *testGateway, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(tg.url + "/v1"),
		option.WithAPIKey(clientKey), option.WithMaxRetries(0)}, opts...)...)
}

var chatParams = openai.ChatCompletionNewParams{
	Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}

// checkWhole asks for a whole answer and checks its text is the
// upstream's, whole.
func checkWhole(t *testing.T, client openai.Client, whole []byte) {
	var want struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(whole, &want); err != nil || len(want.Choices) == 0 {
		t.Errorf("the fixture: %v", err)
		return
	}
	got, err := client.Chat.Completions.New(context.Background(), chatParams)
	if err != nil {
		t.Errorf("whole answer: %v", err)
		return
	}
	if c := got.Choices[0].Message.Content; c != want.Choices[0].Message.Content {
		t.Errorf("whole answer %q, want %q", c, want.Choices[0].Message.Content)
	}
}

// checkStream streams an answer and checks it is chat_stream.sse's text,
// whole, with its finish reason; leaving, when set, is closed once the
// first chunk is in.
func checkStream(t *testing.T, client openai.Client, leaving interface{ Close() error }) {
	s := client.Chat.Completions.NewStreaming(context.Background(), chatParams)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
		if leaving != nil {
			leaving.Close()
			leaving = nil
		}
	}
	if err := s.Err(); err != nil {
		t.Errorf("stream: %v", err)
		return
	}
	if len(acc.Choices) == 0 || acc.Choices[0].Message.Content != "Hello! How can I help?" || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("stream's answer %+v, want \"Hello! How can I help?\" and stop", acc.Choices)
	}
}
