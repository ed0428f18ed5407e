package responses_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/rosetta-gateway/rosetta/codec"
	rc "github.com/rosetta-gateway/rosetta/codec/responses"
)

// TestDecodeRequestErrors: what another provider cannot honour is a 400
// naming the member, in OpenAI's error shape.
func TestDecodeRequestErrors(t *testing.T) {
	f := func(body, param, inMessage string) {
		t.Helper()
		var r codec.Request
		err := rc.DecodeRequest([]byte(body), &r)
		if err == nil {
			t.Fatalf("%s: no error", body)
		}
		if err.Status != 400 || err.Param != param || !strings.Contains(err.Message, inMessage) {
			t.Errorf("%s: %d %q %q", body, err.Status, err.Param, err.Message)
		}
		var shape struct {
			Error struct{ Message, Type string }
		}
		if json.Unmarshal(rc.Dialect.AppendError(nil, err), &shape) != nil || shape.Error.Type != "invalid_request_error" {
			t.Errorf("%s: not OpenAI's error shape", body)
		}
	}
	for _, tool := range []string{"web_search", "web_search_preview", "file_search", "code_interpreter", "computer_use_preview", "image_generation", "mcp", "local_shell", "custom"} {
		f(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"},{"type":"`+tool+`"}]}`, "tools[1].type", "'"+tool+"'")
	}
	f(`{"model":"m","input":"hi","tool_choice":{"type":"file_search"}}`, "tool_choice.type", "'file_search'")
	f(`{"input":"hi"}`, "model", "model")
	f(`{"model":"m"}`, "input", "no content")
	f(`{"model":"m","input":42}`, "input", "string or an array")
	f(`{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`, "input[0].type", "'web_search_call'")
	f(`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].type", "previous_response_id")
	f(`{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", "'tool'")
	f(`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_audio"}]}]}`, "input[0].content[1].type", "'input_audio'")
	f(`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "input[0].content[0].file_id", "file_id")
	f(`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "input[0].content[0].file_id", "file_id")
	f(`{"model":"m","input":[{"role":"user","content":[{}]}]}`, "input[0].content[0].type", "'input[0].content[0].type'")
	f(`{"model":"m","input":[{"type":"function_call","name":"f"}]}`, "input[0].call_id", "call_id")
	f(`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_audio"}]}]}`, "input[0].output[0].type", "'input_audio'")
	f(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","strict":"yes"}]}`, "tools[0].strict", "'strict' must be a boolean")
	f(`{"model":"m","input":"hi","max_output_tokens":0}`, "max_output_tokens", "minimum")
	f(`{"model":"m","input":"hi","reasoning":{"effort":"extreme"}}`, "reasoning.effort", "'extreme'")
	f(`{"model":"m","input":"hi","reasoning":{"summary":"long"}}`, "reasoning.summary", "'long'")
	f(`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}}`, "text.format.schema", "object")
	f(`{"model":"m","input":"hi","background":true}`, "background", "Background")
	f(`{"model":"m","input":"hi","conversation":"conv_1"}`, "conversation", "previous_response_id")
	f(`{"model":"m","input":"hi","prompt":{"id":"pmpt_1"}}`, "prompt", "prompt")
	f(`{"model":"m","input":"hi","metadata":[1]}`, "metadata", "object")
	f(`{"model":"m","input":"hi"`, "", "parse")
}

// TestDecodeSession: what the proxy keeps or resolves is read, not sent.
func TestDecodeSession(t *testing.T) {
	var r codec.Request
	body := `{"model":"m","previous_response_id":"resp_abc","input":[{"role":"user","content":"hi"}],"metadata":{"a":"b"},"store":false,"reasoning":{"generate_summary":"concise"}}`
	if err := rc.DecodeRequest([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	s := r.Session
	if s.PreviousID != "resp_abc" || s.Store || s.Metadata != `{"a":"b"}` || s.ReasoningSummary != "concise" || !r.Thinking.Show ||
		s.Input != `[{"role":"user","content":"hi"}]` {
		t.Errorf("%+v", s)
	}
	if err := rc.DecodeRequest([]byte(`{"model":"m","input":"hi"}`), &r); err != nil || !r.Session.Store {
		t.Errorf("store is true by default: %+v %v", r.Session, err)
	}
}

// TestResponseEchoesRequest: the Response object gives back the settings
// asked, as the SDK reads them.
func TestResponseEchoesRequest(t *testing.T) {
	var req codec.Request
	body := `{"model":"m","instructions":"Be brief.","input":"hi","max_output_tokens":300,"temperature":0.2,"top_p":0.5,
		"tools":[{"type":"function","name":"get","description":"Gets.","parameters":{"type":"object"},"strict":true}],
		"tool_choice":{"type":"function","name":"get"},"parallel_tool_calls":false,"reasoning":{"effort":"low","summary":"auto"},
		"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}},
		"metadata":{"k":"v"},"user":"u1","store":false,"previous_response_id":"resp_prev"}`
	if err := rc.DecodeRequest([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	resp := codec.Response{Parts: []codec.Part{{Kind: codec.PartText, Text: "{}"}}, Stop: codec.StopEnd, Usage: codec.Usage{Input: 10, Output: 2}}
	out := rc.AppendResponse(nil, &resp, codec.StreamInfo{ID: "resp_x1", Model: "public", Created: 1700000000, Request: &req})
	var r responses.Response
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.ID != "resp_x1" || r.Instructions.OfString != "Be brief." || r.MaxOutputTokens != 300 || r.Temperature != 0.2 || r.TopP != 0.5 ||
		r.ParallelToolCalls || r.PreviousResponseID != "resp_prev" || r.Reasoning.Effort != "low" || r.Reasoning.Summary != "auto" ||
		r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "out" || r.ToolChoice.Name != "get" ||
		len(r.Tools) != 1 || r.Tools[0].Name != "get" || !r.Tools[0].Strict || r.Metadata["k"] != "v" || r.User != "u1" ||
		r.OutputText() != "{}" || r.Usage.TotalTokens != 12 {
		t.Errorf("%s", out)
	}
	if !strings.Contains(string(out), `"store":false`) {
		t.Errorf("store is not echoed: %s", out)
	}
}

// TestStoredItemsRoundTrip: the items stored of a turn, put before the
// next request's input, decode into the conversation so far, reasoning
// signatures and tool calls included.
func TestStoredItemsRoundTrip(t *testing.T) {
	var first codec.Request
	if err := rc.DecodeRequest([]byte(`{"model":"m","input":"What is 2+2?","instructions":"Be exact."}`), &first); err != nil {
		t.Fatal(err)
	}
	input := rc.AppendInputItems(nil, &first)
	answer := codec.Response{Parts: []codec.Part{
		{Kind: codec.PartThinking, Text: "Add them.", Signature: "sig-1"},
		{Kind: codec.PartRedactedThinking, Data: "opaque"},
		{Kind: codec.PartToolCall, ID: "toolu_1", Name: "add", Arguments: `{"a":2,"b":2}`},
	}, Stop: codec.StopToolUse}
	output := rc.AppendOutput(nil, &answer, "resp_t1", codec.DialectAnthropic)
	for _, items := range [][]byte{input, output} {
		if !json.Valid(items) {
			t.Fatalf("not JSON: %s", items)
		}
	}
	next := `{"model":"m","previous_response_id":"resp_t1","input":[{"type":"function_call_output","call_id":"toolu_1","output":"4"}]}`
	body, err := rc.Prepend(nil, []byte(next), input, output)
	if err != nil {
		t.Fatal(err)
	}
	var r codec.Request
	if err := rc.DecodeRequest(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(r.System) != 0 {
		t.Errorf("instructions are not carried over: %+v", r.System)
	}
	if len(r.Messages) != 3 {
		t.Fatalf("%d messages: %s", len(r.Messages), body)
	}
	user, asst, results := r.Messages[0], r.Messages[1], r.Messages[2]
	if user.Role != codec.RoleUser || user.Parts[0].Text != "What is 2+2?" {
		t.Errorf("user turn %+v", user)
	}
	if len(asst.Parts) != 3 || asst.Parts[0].Signature != "sig-1" || asst.Parts[0].SigOrigin != codec.DialectAnthropic ||
		asst.Parts[0].Text != "Add them." || asst.Parts[1].Kind != codec.PartRedactedThinking || asst.Parts[1].Data != "opaque" ||
		asst.Parts[2].ID != "toolu_1" || asst.Parts[2].Arguments != `{"a":2,"b":2}` {
		t.Errorf("assistant turn %+v", asst)
	}
	if p := results.Parts[0]; p.Kind != codec.PartToolResult || p.Name != "add" || p.Content[0].Text != "4" {
		t.Errorf("tool results %+v", results)
	}
	if got := string(rc.AppendInputItems(nil, &r)); !strings.HasPrefix(got, `[{"type":"message","role":"user"`) || !strings.HasSuffix(got, `"output":"4"}]`) {
		t.Errorf("the continued request's input items hold the stored ones first: %s", got)
	}
}

func TestPrepend(t *testing.T) {
	f := func(body string, stored []string, want string) {
		t.Helper()
		var items [][]byte
		for _, s := range stored {
			items = append(items, []byte(s))
		}
		got, err := rc.Prepend(nil, []byte(body), items...)
		if err != nil || string(got) != want {
			t.Errorf("Prepend(%s) = %s, %v; want %s", body, got, err, want)
		}
	}
	f(`{"model":"m","input":"hi"}`, []string{`[{"a":1}]`, ` [ ] `},
		`{"model":"m","input":[{"a":1},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	f(`{"input":[ {"b":2} ],"model":"m"}`, []string{`[{"a":1}, {"c":3}]`}, `{"input":[{"a":1}, {"c":3},{"b":2}],"model":"m"}`)
	f(`{"model":"m"}`, []string{`[{"a":1}]`}, `{"input":[{"a":1}],"model":"m"}`)
	f(` {}`, []string{`[{"a":1}]`}, ` {"input":[{"a":1}]}`)
	if _, err := rc.Prepend(nil, []byte(`[1]`)); err == nil || err.Status != 400 {
		t.Errorf("a body that is not an object: %v", err)
	}
	if _, err := rc.Prepend(nil, []byte(`{"input":"x"}`), []byte(`{"a":1}`)); err == nil || err.Status != 500 {
		t.Errorf("stored items that are not an array: %v", err)
	}
}
