package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

func TestFinishReasonToStop(t *testing.T) {
	f := func(finish string, toolCalls bool, want codec.StopReason) {
		t.Helper()
		calls := ""
		if toolCalls {
			calls = `,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]`
		}
		body := `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"` + calls + `},"finish_reason":` + jsonString(finish) + `}]}`
		var r codec.Response
		if err := openai.DecodeResponse([]byte(body), &r); err != nil {
			t.Fatalf("DecodeResponse(%s): %v", body, err)
		}
		if r.Stop != want {
			t.Errorf("finish_reason %q (tool calls %v) = %v, want %v", finish, toolCalls, r.Stop, want)
		}
	}
	f("stop", false, codec.StopEnd)
	f("stop", true, codec.StopToolUse) // vLLM and others say "stop" with tool calls
	f("length", false, codec.StopMaxTokens)
	f("length", true, codec.StopMaxTokens)
	f("tool_calls", true, codec.StopToolUse)
	f("function_call", false, codec.StopToolUse)
	f("content_filter", false, codec.StopContentFilter)
	f("eos", false, codec.StopEnd)
	f("", false, codec.StopUnknown)
	f("something_new", false, codec.StopUnknown)
}

func jsonString(s string) string {
	if s == "" {
		return "null"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func TestStopToFinishReason(t *testing.T) {
	f := func(stop codec.StopReason, toolCall bool, want string) {
		t.Helper()
		r := codec.Response{Stop: stop, Parts: []codec.Part{{Kind: codec.PartText, Text: "x"}}}
		if toolCall {
			r.Parts = append(r.Parts, codec.Part{Kind: codec.PartToolCall, ID: "c", Name: "f", Arguments: "{}"})
		}
		b := openai.AppendResponse(nil, &r, testInfo)
		if !bytes.Contains(b, []byte(`"finish_reason":"`+want+`"`)) {
			t.Errorf("AppendResponse(stop %v, tool call %v) = %s, want finish_reason %q", stop, toolCall, b, want)
		}
		var e openai.StreamEncoder
		e.Reset(testInfo)
		out := e.Encode(nil, &codec.Event{Kind: codec.EventStart})
		if toolCall {
			out = e.Encode(out, &codec.Event{Kind: codec.EventBlockStart, Block: codec.PartToolCall, ID: "c", Name: "f"})
		}
		out = e.Encode(out, &codec.Event{Kind: codec.EventFinish, Stop: stop})
		if !bytes.Contains(out, []byte(`"finish_reason":"`+want+`"`)) {
			t.Errorf("StreamEncoder(stop %v, tool call %v) = %s, want finish_reason %q", stop, toolCall, out, want)
		}
	}
	f(codec.StopEnd, false, "stop")
	f(codec.StopEnd, true, "tool_calls") // Gemini says STOP for function calls
	f(codec.StopSequence, false, "stop")
	f(codec.StopMaxTokens, false, "length")
	f(codec.StopToolUse, true, "tool_calls")
	f(codec.StopContentFilter, false, "content_filter")
	f(codec.StopPause, false, "stop")
	f(codec.StopError, false, "stop")
	f(codec.StopUnknown, false, "stop")
}

// appendRequest encodes r and returns the body as a map, with the dropped
// list.
func appendRequest(t *testing.T, r *codec.Request) (map[string]any, []string) {
	t.Helper()
	b, dropped, err := openai.AppendRequest(nil, r)
	if err != nil {
		t.Fatalf("AppendRequest: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("AppendRequest = %s: %v", b, err)
	}
	return m, dropped
}

func userText(s string) []codec.Message {
	return []codec.Message{{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartText, Text: s}}}}
}

func TestReasoningEffortFromBudget(t *testing.T) {
	f := func(th codec.Thinking, want string) {
		t.Helper()
		m, _ := appendRequest(t, &codec.Request{Model: "o3", Messages: userText("hi"), Thinking: th})
		got, _ := m["reasoning_effort"].(string)
		if got != want {
			t.Errorf("Thinking %+v: reasoning_effort %q, want %q", th, got, want)
		}
	}
	f(codec.Thinking{}, "")
	f(codec.Thinking{Enabled: true}, "") // no budget: the model's default
	f(codec.Thinking{Enabled: true, Budget: 1}, "low")
	f(codec.Thinking{Enabled: true, Budget: 1024}, "low")
	f(codec.Thinking{Enabled: true, Budget: 2047}, "low")
	f(codec.Thinking{Enabled: true, Budget: 2048}, "medium")
	f(codec.Thinking{Enabled: true, Budget: 8191}, "medium")
	f(codec.Thinking{Enabled: true, Budget: 8192}, "high")
	f(codec.Thinking{Enabled: true, Budget: 32000}, "high")
	f(codec.Thinking{Enabled: true, Budget: 32000, Effort: "minimal"}, "minimal") // a level wins
	f(codec.Thinking{Effort: "none"}, "none")
	f(codec.Thinking{Enabled: true, Effort: "xhigh"}, "xhigh")
	f(codec.Thinking{Enabled: true, Budget: 500, Effort: "bogus"}, "low")
}

func TestReasoningModelSettings(t *testing.T) {
	temp := 0.5
	f := func(model string, reasoning bool) {
		t.Helper()
		r := codec.Request{Model: model, Messages: userText("hi"), MaxTokens: 100, Temperature: &temp, Stop: []string{"x"},
			Thinking: codec.Thinking{Enabled: true, Effort: "low"}}
		m, dropped := appendRequest(t, &r)
		_, mct := m["max_completion_tokens"]
		_, mt := m["max_tokens"]
		_, effort := m["reasoning_effort"]
		_, hasTemp := m["temperature"]
		_, hasStop := m["stop"]
		if mct != reasoning || mt == reasoning || effort != reasoning || hasTemp == reasoning || hasStop == reasoning {
			t.Errorf("model %q (reasoning %v): %v, dropped %q", model, reasoning, m, dropped)
		}
	}
	for _, name := range []string{"o1", "o1-mini", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "gpt-5.1", "gpt-5-codex", "openai/o3"} {
		f(name, true)
	}
	for _, name := range []string{"gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest", "omni-moderation-latest", "o", "deepseek-reasoner", "claude-sonnet-4-5", ""} {
		f(name, false)
	}
}

func TestDecodeImageURLs(t *testing.T) {
	f := func(url string, want codec.Part) {
		t.Helper()
		body := `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":` + jsonString(url) + `}}]}]}`
		var r codec.Request
		if err := openai.DecodeRequest([]byte(body), &r); err != nil {
			t.Fatalf("DecodeRequest(%s): %v", url, err)
		}
		if got := r.Messages[0].Parts[0]; got.Kind != want.Kind || got.MediaType != want.MediaType || got.Data != want.Data || got.URL != want.URL {
			t.Errorf("image %q = %+v, want %+v", url, got, want)
		}
	}
	f("data:image/png;base64,AAAA", codec.Part{Kind: codec.PartImage, MediaType: "image/png", Data: "AAAA"})
	f("data:image/jpeg;name=a.jpg;base64,/9j/", codec.Part{Kind: codec.PartImage, MediaType: "image/jpeg", Data: "/9j/"})
	f("https://example.com/a.png?x=1", codec.Part{Kind: codec.PartImage, URL: "https://example.com/a.png?x=1"})
	f("http://localhost/a.png", codec.Part{Kind: codec.PartImage, URL: "http://localhost/a.png"})

	for _, url := range []string{"data:image/png,AAAA", "data:image/png;base64", "file:///etc/passwd", "", "gs://bucket/a.png"} {
		body := `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":` + jsonString(url) + `}}]}]}`
		var r codec.Request
		if err := openai.DecodeRequest([]byte(body), &r); err == nil || err.Status != 400 {
			t.Errorf("image %q: error %v, want a 400", url, err)
		}
	}
}

func TestLongToolCallIDs(t *testing.T) {
	long := "gsigb200_" + strings.Repeat("A", 200) + "_call_1"
	r := codec.Request{Model: "gpt-4o", Messages: []codec.Message{
		{Role: codec.RoleAssistant, Parts: []codec.Part{{Kind: codec.PartToolCall, ID: long, Name: "f", Arguments: "{}"}, {Kind: codec.PartToolCall, ID: "call_short", Name: "g"}}},
		{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartToolResult, ID: long, Content: []codec.Part{{Kind: codec.PartText, Text: "ok"}}}, {Kind: codec.PartToolResult, ID: "call_short"}}},
	}}
	b, _, err := openai.AppendRequest(nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Messages []struct {
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	id := w.Messages[0].ToolCalls[0].ID
	if len(id) != 40 || !strings.HasPrefix(id, "call_") || w.Messages[1].ToolCallID != id {
		t.Errorf("long id became %q (%d), result %q", id, len(id), w.Messages[1].ToolCallID)
	}
	if w.Messages[0].ToolCalls[1].ID != "call_short" || w.Messages[2].ToolCallID != "call_short" {
		t.Errorf("short id changed: %s", b)
	}
	if w.Messages[0].ToolCalls[1].Function.Arguments != "{}" {
		t.Errorf("empty arguments are not {}: %s", b)
	}
}

// A reused Request keeps no trace of the previous one.
func TestDecodeRequestReuse(t *testing.T) {
	var r codec.Request
	for _, name := range []string{"thinking_blocks", "legacy_functions", "wire_chat_request_tools"} {
		in := "testdata/translate/request/" + name + ".in.json"
		if strings.HasPrefix(name, "wire_") {
			in = wireDir + "/" + strings.TrimPrefix(name, "wire_") + ".json"
		}
		if err := openai.DecodeRequest(read(t, in), &r); err != nil {
			t.Fatal(err)
		}
	}
	small := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if err := openai.DecodeRequest(small, &r); err != nil {
		t.Fatal(err)
	}
	var fresh codec.Request
	if err := openai.DecodeRequest(small, &fresh); err != nil {
		t.Fatal(err)
	}
	// Reset keeps capacity: empty, not nil.
	if len(r.System) == 0 && len(r.Tools) == 0 && len(r.Stop) == 0 {
		r.System, r.Tools, r.Stop = nil, nil, nil
	}
	if a, b := dump(t, &r), dump(t, &fresh); !bytes.Equal(a, b) {
		t.Errorf("reused request differs from a fresh one:\n%s", diffLines(b, a))
	}
}

func TestDecodeRequestDroppedOnce(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","name":"a","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}},{"type":"image_url","image_url":{"url":"https://x/b.png","detail":"high"}}]},{"role":"user","name":"b","content":"x"}],"logprobs":false}`
	var r codec.Request
	dropped, err := openai.DecodeRequestDropped([]byte(body), &r, []string{"earlier"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"earlier", "messages.name", "image_url.detail", "logprobs"}
	if strings.Join(dropped, ",") != strings.Join(want, ",") {
		t.Errorf("dropped = %q, want %q", dropped, want)
	}
}

// decodeStream decodes chunks (data values) and returns the events.
func decodeStream(t *testing.T, chunks ...string) ([]codec.Event, error) {
	t.Helper()
	var d openai.StreamDecoder
	var events []codec.Event
	for _, c := range chunks {
		from := len(events)
		var err error
		events, err = d.Decode(events, nil, []byte(c))
		cloneEvents(events[from:])
		if err != nil {
			return events, err
		}
	}
	return d.End(events), nil
}

// kinds renders events as a short string: "S B0t D0t E0t F U" and so on.
func kinds(events []codec.Event) string {
	var b strings.Builder
	for i, e := range events {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString([]string{"S", "B", "D", "E", "F", "U", "X"}[e.Kind])
		if e.Kind >= codec.EventBlockStart && e.Kind <= codec.EventBlockStop {
			b.WriteString(string(rune('0' + e.Index)))
			b.WriteString([]string{"t", "i", "d", "c", "r", "k", "x"}[e.Block])
		}
	}
	return b.String()
}

func TestStreamBlocks(t *testing.T) {
	const h = `{"id":"c1","model":"m","choices":[{"index":0,"delta":`
	call := func(index int, id, args string) string {
		c := `{"index":` + string(rune('0'+index))
		if id != "" {
			c += `,"id":"` + id + `","type":"function","function":{"name":"f` + id + `","arguments":` + jsonString(args) + `}}`
		} else {
			c += `,"function":{"arguments":` + jsonString(args) + `}}`
		}
		return h + `{"tool_calls":[` + c + `]}}]}`
	}
	text := func(field, s string) string { return h + `{"` + field + `":` + jsonString(s) + `}}]}` }
	finish := func(r string) string {
		return `{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + r + `"}]}`
	}
	f := func(want string, chunks ...string) {
		t.Helper()
		events, err := decodeStream(t, chunks...)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if got := kinds(events); got != want {
			t.Errorf("events %s, want %s", got, want)
		}
	}
	// Reasoning, then text: two blocks.
	f("S B0k D0k E0k B1t D1t E1t F", text("reasoning_content", "a"), text("content", "b"), finish("stop"))
	// Empty content (the role chunk) opens nothing.
	f("S F", text("content", ""), finish("stop"))
	// Text interrupts an incomplete call: the call's block closes as it is,
	// and the held-back one gets its block.
	f("S B0c D0c E0c B1c D1c E1c B2t D2t E2t F", call(0, "a", `{"x":`), call(1, "b", `{}`), text("content", "t"), finish("stop"))
	// Three interleaved calls: the live one streams, the others wait.
	f("S B0c D0c D0c E0c B1c D1c E1c B2c D2c E2c F",
		call(0, "a", `{"x":`), call(1, "b", `{"y":`), call(2, "c", `{"z":3}`), call(1, "", `2}`), call(0, "", `1}`), finish("tool_calls"))
	// A complete call stays open while no other call waits: a trailing
	// fragment (even junk a model wrote after the object) still belongs
	// to it.
	f("S B0c D0c D0c E0c F", call(0, "a", `{"x":1}`), call(0, "", "\n"), finish("tool_calls"))
	f("S B0c D0c D0c E0c B1c D1c E1c F", call(0, "a", `{"x":1}`), call(0, "", `}`), call(1, "b", `{}`), finish("tool_calls"))
	// A call whose arguments never complete is closed at the finish.
	f("S B0c D0c E0c F", call(0, "a", `{"x":`), finish("tool_calls"))
	// Arguments that are not an object still stream.
	f("S B0c D0c D0c E0c F", call(0, "a", `"str`), call(0, "", `ing"`), finish("tool_calls"))
	// Usage on a content chunk, then more content: one Usage, at the end.
	f("S B0t D0t D0t E0t F U", `{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, text("content", "b"), finish("stop"), "[DONE]")
	// Content after the finish is ignored; [DONE] twice is harmless.
	f("S B0t D0t E0t F", text("content", "a"), finish("stop"), text("content", "late"), "[DONE]", "[DONE]")
	// A signature with no open thinking block makes a block of its own.
	f("S B0t D0t E0t B1k D1k E1k F", text("content", "a"), h+`{"thinking_blocks":[{"type":"thinking","thinking":"","signature":"s"}]}}]}`, finish("stop"))
	// Choices other than 0 are ignored.
	f("S F", `{"id":"c1","model":"m","choices":[{"index":1,"delta":{"content":"other"}}]}`, finish("stop"))
}

func TestStreamStartUsesFirstRealChunk(t *testing.T) {
	events, err := decodeStream(t, `{"choices":[],"id":"","model":"","prompt_filter_results":[]}`, `{"id":"c9","model":"gpt","choices":[{"index":0,"delta":{"content":"x"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if events[0].Kind != codec.EventStart || events[0].ID != "c9" || events[0].Model != "gpt" {
		t.Errorf("Start = %+v", events[0])
	}
}

func TestStreamErrors(t *testing.T) {
	f := func(event, data string, want codec.Error) {
		t.Helper()
		var d openai.StreamDecoder
		events, err := d.Decode(nil, []byte(event), []byte(data))
		if err != nil || len(events) != 1 || events[0].Kind != codec.EventError || *events[0].Err != want {
			t.Fatalf("Decode(%q, %s) = %+v, %v; want an error event %+v", event, data, events, err, want)
		}
		if more := d.End(nil); len(more) != 0 {
			t.Errorf("End after an error = %+v", more)
		}
	}
	f("", `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`,
		codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "boom", Type: "server_error"})
	f("", `{"error":{"message":"slow down","type":"tokens","code":"rate_limit_exceeded"}}`,
		codec.Error{Status: 429, Kind: codec.KindRateLimitRequests, Message: "slow down", Type: "tokens", Code: "rate_limit_exceeded"})
	f("", `{"error":{"message":"bad","code":400}}`,
		codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "bad", Code: "400"})
	f("", `{"error":"plain string"}`, codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "plain string"})
	f("error", `overloaded`, codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "overloaded"})
	f("error", `{"message":"vllm style","type":"BadRequestError","code":400}`,
		codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "vllm style", Type: "BadRequestError", Code: "400"})
}

func TestStreamDecoderReset(t *testing.T) {
	in := read(t, wireDir+"/chat_stream_tool_calls.sse")
	want, err := decodeSSE(t, in)
	if err != nil {
		t.Fatal(err)
	}
	var d openai.StreamDecoder
	for range 3 {
		d.Reset()
		var got []codec.Event
		for _, line := range bytes.Split(in, []byte("\n\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok {
				continue
			}
			from := len(got)
			got, err = d.Decode(got, nil, data)
			cloneEvents(got[from:])
			if err != nil {
				t.Fatal(err)
			}
		}
		got = d.End(got)
		if !bytes.Equal(dumpEvents(t, got), dumpEvents(t, want)) {
			t.Fatalf("after Reset: events differ")
		}
	}
}

func TestStreamEncoderReset(t *testing.T) {
	events := loadEvents(t, read(t, "testdata/translate/stream_encode/anthropic_thinking_tool.events.json"))
	want := encodeEvents(events, testInfo)
	var e openai.StreamEncoder
	for _, info := range []codec.StreamInfo{{ID: "other", Model: "x"}, testInfo} {
		e.Reset(info)
		var out []byte
		for i := range events {
			out = e.Encode(out, &events[i])
		}
		out = e.End(out)
		if info == testInfo && !bytes.Equal(out, want) {
			t.Errorf("after Reset:\n%s", diffLines(want, out))
		}
	}
}

func TestStreamEncoderIDs(t *testing.T) {
	f := func(info codec.StreamInfo, upstreamID, wantID, wantModel string) {
		t.Helper()
		var e openai.StreamEncoder
		e.Reset(info)
		out := e.Encode(nil, &codec.Event{Kind: codec.EventStart, ID: upstreamID, Model: "upstream-model"})
		var w struct {
			ID    string `json:"id"`
			Model string `json:"model"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(bytes.TrimPrefix(out, []byte("data: "))), &w); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if w.ID != wantID || w.Model != wantModel {
			t.Errorf("id %q model %q, want %q %q", w.ID, w.Model, wantID, wantModel)
		}
	}
	f(codec.StreamInfo{ID: "chatcmpl-abc", Model: "pub"}, "msg_1", "chatcmpl-abc", "pub")
	f(codec.StreamInfo{ID: "req-42", Model: "pub"}, "msg_1", "chatcmpl-req-42", "pub")
	f(codec.StreamInfo{}, "msg_1", "chatcmpl-msg_1", "upstream-model")
	f(codec.StreamInfo{Model: "pub"}, `we"ird`, `chatcmpl-we"ird`, "pub")
}

func TestStreamEncoderUsageOnlyWhenAsked(t *testing.T) {
	for _, include := range []bool{false, true} {
		info := testInfo
		info.IncludeUsage = include
		out := encodeEvents([]codec.Event{{Kind: codec.EventStart}, {Kind: codec.EventFinish, Stop: codec.StopEnd}, {Kind: codec.EventUsage, Usage: codec.Usage{Input: 3, Output: 4}}}, info)
		if got := bytes.Contains(out, []byte(`"choices":[],"usage":{"prompt_tokens":3`)); got != include {
			t.Errorf("IncludeUsage %v: usage chunk present %v:\n%s", include, got, out)
		}
		if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
			t.Errorf("no [DONE] at the end:\n%s", out)
		}
	}
}

func TestAppendStreamError(t *testing.T) {
	got := openai.AppendStreamError([]byte("x"), &codec.Error{Status: 500, Kind: codec.KindServer, Message: "gateway fault"})
	want := "x" + `data: {"error":{"message":"gateway fault","type":"server_error","param":null,"code":null}}` + "\n\n"
	if string(got) != want {
		t.Errorf("AppendStreamError = %q, want %q", got, want)
	}
}

// Malformed or hostile input gives errors, never panics.
func TestDecodersRejectGarbage(t *testing.T) {
	for _, b := range []string{"", "null", "[]", "{", `{"model":"m","messages":"x"}`, `{"model":"m","messages":[null]}`,
		`{"model":"m","messages":[{"role":"user","content":{}}]}`, `{"model":"m","messages":[{"role":"user","content":[1]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"custom"}]}]}`, "{\"model\":\"m\x00\",\"messages\":[]}",
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function"}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":[1]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":1.5}`} {
		var r codec.Request
		if err := openai.DecodeRequest([]byte(b), &r); err == nil || err.Status != 400 {
			t.Errorf("DecodeRequest(%q) = %v, want a 400", b, err)
		}
	}
	for _, b := range []string{"", "{}", `{"choices":null}`, `{"choices":[{"message":{"content":{}}}]}`, "[", `{"choices":[{"index":0,"message":{"tool_calls":"x"}}]}`} {
		var r codec.Response
		if err := openai.DecodeResponse([]byte(b), &r); err == nil {
			t.Errorf("DecodeResponse(%q) = nil, want an error", b)
		}
	}
	for _, b := range []string{"{", "[1]", `{"choices":[{"index":0,"delta":{"content":1}}]}`, `{"choices":"x"}`} {
		var d openai.StreamDecoder
		if _, err := d.Decode(nil, nil, []byte(b)); err == nil {
			t.Errorf("StreamDecoder.Decode(%q) = nil, want an error", b)
		}
	}
}

// Keys are case-sensitive, as OpenAI reads them: DecodeRequest must read
// the "model" that ChatRequest.Parse checked against the allow-list.
func TestDecodeRequestCaseSensitiveKeys(t *testing.T) {
	body := []byte(`{"model":"allowed","MODEL":"other","Model":"other","messages":[{"role":"user","content":"hi","Content":"x"}],"Temperature":0.1}`)
	var p openai.ChatRequest
	if err := p.Parse(body); err != nil {
		t.Fatal(err)
	}
	var r codec.Request
	if err := openai.DecodeRequest(body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != string(p.Model) || r.Model != "allowed" || r.Temperature != nil || r.Messages[0].Parts[0].Text != "hi" {
		t.Errorf("DecodeRequest read model %q (Parse %q), temperature %v, text %q", r.Model, p.Model, r.Temperature, r.Messages[0].Parts[0].Text)
	}
	if err := openai.DecodeRequest([]byte(`{"model":"m","Messages":[{"role":"user","content":"hi"}]}`), &r); err == nil {
		t.Errorf("DecodeRequest accepted \"Messages\" for \"messages\"")
	}
}
