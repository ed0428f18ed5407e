package anthropic_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

func optionsFor(name string) anthropic.Options {
	if strings.HasPrefix(name, "v2026_") {
		return anthropic.Options{Version: anthropic.Version20261021}
	}
	return anthropic.Options{}
}

// errorGolden is how a rejected input is recorded.
type errorGolden struct {
	Status int             `json:"status"`
	Param  string          `json:"param,omitempty"`
	Body   json.RawMessage `json:"body"`
}

func errorJSON(t *testing.T, e *codec.Error) []byte {
	t.Helper()
	return dumpJSON(t, errorGolden{Status: e.Status, Param: e.Param, Body: anthropic.AppendError(nil, e)})
}

// indent pretty-prints a compact JSON body for a golden file, keeping its
// key order, numbers and escapes; it fails the test on invalid JSON.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("invalid JSON %v:\n%s", err, b)
	}
	return append(out.Bytes(), '\n')
}

// TestGoldenRequests decodes every request input to canonical and encodes
// the canonical request back to Anthropic's wire (for an upstream of the same
// API version), then checks that decoding and encoding that output again
// changes nothing.
func TestGoldenRequests(t *testing.T) {
	dir := "testdata/request"
	for _, c := range goldenCases(t, dir, ".in.json", ".canonical.json", "messages_request_tools.json") {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(dir, c.name)
			o := optionsFor(c.name)
			var r codec.Request
			if c.in != "" {
				if err := anthropic.DecodeRequestOptions(readFile(t, c.in), &r, o); err != nil {
					golden(t, base+".error.json", errorJSON(t, err))
					goldenAbsent(t, base+".canonical.json")
					goldenAbsent(t, base+".out.json")
					return
				}
				golden(t, base+".canonical.json", dumpJSON(t, &r))
			} else {
				loadCanonical(t, base+".canonical.json", &r)
			}
			out, dropped, err := anthropic.AppendRequestOptions(nil, &r, o)
			if err != nil {
				golden(t, base+".error.json", errorJSON(t, err))
				goldenAbsent(t, base+".out.json")
				return
			}
			golden(t, base+".out.json", indent(t, out))
			if len(dropped) > 0 {
				golden(t, base+".dropped.json", dumpJSON(t, dropped))
			} else {
				goldenAbsent(t, base+".dropped.json")
			}
			checkRequestRoundTrip(t, out, o, c.in != "" && len(dropped) == 0 && !signedCalls(&r), &r)
		})
	}
}

// checkRequestRoundTrip decodes an encoded request and encodes it again:
// the bytes must not change, and with same (nothing dropped, Anthropic
// input) the canonical request must not either.
func checkRequestRoundTrip(t *testing.T, out []byte, o anthropic.Options, same bool, want *codec.Request) {
	t.Helper()
	var r2 codec.Request
	if err := anthropic.DecodeRequestOptions(out, &r2, o); err != nil {
		t.Fatalf("decoding the encoded request: %v\n%s", err, out)
	}
	out2, _, err := anthropic.AppendRequestOptions(nil, &r2, o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, out2) {
		t.Errorf("encode(decode(out)) differs from out:\n%s\n%s", out2, out)
	}
	if same {
		// Thinking display is not sent upstream (older API surfaces reject
		// it): the client-side encoder honours it instead.
		w := *want
		w.Thinking.Show = r2.Thinking.Show
		if a, b := dumpJSON(t, &w), dumpJSON(t, &r2); !bytes.Equal(a, b) {
			t.Errorf("canonical request changed in the round trip:\n--- first\n%s\n--- second\n%s", a, b)
		}
	}
}

// signedCalls reports whether a tool call of r carries a signature, which
// is not sent to an Anthropic upstream.
func signedCalls(r *codec.Request) bool {
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			if p.Kind == codec.PartToolCall && p.Signature != "" {
				return true
			}
		}
	}
	return false
}

// TestDecodeCountTokens: count_tokens needs no max_tokens, and its encoding
// carries neither max_tokens nor stream nor sampling settings.
func TestDecodeCountTokens(t *testing.T) {
	body := readFile(t, filepath.Join(wireDir, "count_tokens_request.json"))
	var r codec.Request
	if err := anthropic.DecodeCountTokens(body, &r, anthropic.Options{}); err != nil {
		t.Fatal(err)
	}
	if r.MaxTokens != 0 || r.Stream || len(r.Messages) == 0 {
		t.Fatalf("unexpected request %+v", r)
	}
	var r2 codec.Request
	if err := anthropic.DecodeRequest(body, &r2); err == nil || err.Param != "max_tokens" {
		t.Fatalf("a Messages request without max_tokens must be rejected naming it, got %v", err)
	}
	r.Temperature = new(float64)
	out, _, err := anthropic.AppendCountTokensRequest(nil, &r, anthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"max_tokens"`, `"stream"`, `"temperature"`, `"metadata"`} {
		if bytes.Contains(out, []byte(k)) {
			t.Errorf("count_tokens body has %s: %s", k, out)
		}
	}
	if got := string(anthropic.AppendCountTokensResponse(nil, 1234)); got != `{"input_tokens":1234}` {
		t.Errorf("AppendCountTokensResponse = %s", got)
	}
	n, err2 := anthropic.DecodeCountTokensResponse(readFile(t, filepath.Join(wireDir, "count_tokens_response.json")))
	if err2 != nil || n <= 0 {
		t.Errorf("DecodeCountTokensResponse = %d, %v", n, err2)
	}
}

// TestDecodeRequestErrors: what the API rejects, the gateway rejects with a
// 400 naming the field.
func TestDecodeRequestErrors(t *testing.T) {
	f := func(version, body, param string) {
		t.Helper()
		var r codec.Request
		err := anthropic.DecodeRequestOptions([]byte(body), &r, anthropic.Options{Version: version})
		if err == nil {
			t.Errorf("%s: accepted, want a 400 naming %q", body, param)
			return
		}
		if err.Status != 400 || err.Kind != codec.KindInvalidRequest || err.Param != param {
			t.Errorf("%s: got %d %q (%s), want 400 naming %q", body, err.Status, err.Param, err.Message, param)
		}
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const v1, v2 = anthropic.Version20230601, anthropic.Version20261021
	f(v1, `{"model":"m",`+msgs+`}`, "max_tokens")
	f(v1, `{"model":"m","max_tokens":0,`+msgs+`}`, "max_tokens")
	f(v1, `{"model":"m","max_tokens":"10",`+msgs+`}`, "max_tokens")
	f(v1, `{"model":"m","max_tokens":1.5,`+msgs+`}`, "max_tokens")
	f(v1, `{"max_tokens":10,`+msgs+`}`, "model")
	f(v1, `{"model":"","max_tokens":10,`+msgs+`}`, "model")
	f(v1, `{"model":"m","max_tokens":10}`, "messages")
	f(v1, `{"model":"m","max_tokens":10,"messages":[]}`, "messages")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"tool","content":"x"}]}`, "messages.0.role")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user"}]}`, "messages.0.content")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":5}]}`, "messages.0.content")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"search_result","source":"s","title":"t","content":[]}]}]}`, "messages.0.content.0.type")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages.0.content.0.source")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages.0.content.0.tool_use_id")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":[1]}]}]}`, "messages.0.content.0")
	f(v1, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]}`, "messages.1.role")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"system":[{"type":"image"}]}`, "system.0.type")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"system":5}`, "system")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, "tools.0.type")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tools":[{"type":"bash_20250124","name":"bash"}]}`, "tools.0.type")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tools":[{"name":"x"}]}`, "tools.0.input_schema")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tools":[{"input_schema":{}}]}`, "tools.0.name")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tool_choice":{"type":"tool"}}`, "tool_choice.name")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"tool_choice":{"type":"required"}}`, "tool_choice.type")
	f(v1, `{"model":"m","max_tokens":2000,`+msgs+`,"thinking":{"type":"enabled"}}`, "thinking.budget_tokens")
	f(v1, `{"model":"m","max_tokens":2000,`+msgs+`,"thinking":{"type":"enabled","budget_tokens":1023}}`, "thinking.budget_tokens")
	f(v1, `{"model":"m","max_tokens":2000,`+msgs+`,"thinking":{"type":"enabled","budget_tokens":2000}}`, "max_tokens")
	f(v1, `{"model":"m","max_tokens":2000,`+msgs+`,"thinking":{"type":"sometimes"}}`, "thinking.type")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"temperature":1.5}`, "temperature")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"top_p":"x"}`, "top_p")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"top_k":-1}`, "top_k")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"stream":"yes"}`, "stream")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"stop_sequences":["END","\n"]}`, "stop_sequences")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"output_config":{"format":{"type":"json_object"}}}`, "output_config.format.type")
	f(v1, `{"model":"m","max_tokens":10,`+msgs+`,"output_config":{"format":{"type":"json_schema"}}}`, "output_config.format.schema")
	f(v1, `{"model":"m","max_tokens":10,`+msgs, "")
	f(v1, ``, "")
	f("2024-01-01", `{"model":"m","max_tokens":10,`+msgs+`}`, "anthropic-version")
	// API version 2026-10-21: sampling settings are gone (even at their
	// defaults, even null), assistant documents and user citations rejected.
	f(v2, `{"model":"m","max_tokens":10,`+msgs+`,"temperature":1}`, "temperature")
	f(v2, `{"model":"m","max_tokens":10,`+msgs+`,"temperature":null}`, "temperature")
	f(v2, `{"model":"m","max_tokens":10,`+msgs+`,"top_p":0.9}`, "top_p")
	f(v2, `{"model":"m","max_tokens":10,`+msgs+`,"top_k":5}`, "top_k")
	f(v2, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]}`, "messages.1.content.0")
	f(v2, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a","citations":[{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}]}]}]}`, "messages.0.content.0.citations")
}

// TestDecodeRequestVersions: what 2026-10-21 rejects, 2023-06-01 accepts.
func TestDecodeRequestVersions(t *testing.T) {
	f := func(body string) {
		t.Helper()
		var r codec.Request
		if err := anthropic.DecodeRequestOptions([]byte(body), &r, anthropic.Options{Version: anthropic.Version20230601}); err != nil {
			t.Errorf("2023-06-01 rejected %s: %v", body, err)
		}
		if err := anthropic.DecodeRequestOptions([]byte(body), &r, anthropic.Options{Version: anthropic.Version20261021}); err == nil {
			t.Errorf("2026-10-21 accepted %s", body)
		}
	}
	f(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"temperature":0.2}`)
	f(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a","citations":[{"type":"char_location"}]}]}]}`)
	f(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}}]}]}`)
	if !anthropic.KnownVersion("2023-06-01") || !anthropic.KnownVersion("2026-10-21") || anthropic.KnownVersion("2023-01-01") || anthropic.KnownVersion("") {
		t.Error("KnownVersion is wrong")
	}
}

// TestAppendRequestVersion2026: an upstream on 2026-10-21 is never sent
// temperature, top_p or top_k, and the gateway says it dropped them.
func TestAppendRequestVersion2026(t *testing.T) {
	temp, topP, topK := 0.5, 0.9, 40
	r := codec.Request{Model: "m", MaxTokens: 100, Temperature: &temp, TopP: &topP, TopK: &topK,
		Messages: []codec.Message{{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartText, Text: "hi"}}}}}
	out, dropped, err := anthropic.AppendRequestOptions(nil, &r, anthropic.Options{Version: anthropic.Version20261021})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("temperature")) || bytes.Contains(out, []byte("top_")) {
		t.Errorf("sampling settings sent to a 2026-10-21 upstream: %s", out)
	}
	if strings.Join(dropped, ",") != "temperature,top_p,top_k" {
		t.Errorf("dropped = %q", dropped)
	}
	out, dropped, _ = anthropic.AppendRequestOptions(nil, &r, anthropic.Options{})
	if !bytes.Contains(out, []byte(`"temperature":0.5,"top_p":0.9,"top_k":40`)) || len(dropped) != 0 {
		t.Errorf("2023-06-01 upstream: %s, dropped %q", out, dropped)
	}
}

// TestAppendRequestForeignSignedID: a Gemini call whose signature rides in
// its id (a conversation moved from a Gemini channel) reaches Anthropic
// with its bare id, in its tool_use and its tool_result alike: the
// signature is Gemini's alone.
func TestAppendRequestForeignSignedID(t *testing.T) {
	id := codec.EncodeSignedID("gcall_r1_0", "CikBnKamKgWmIGus")
	r := codec.Request{Model: "m", MaxTokens: 100, Messages: []codec.Message{
		{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartText, Text: "hi"}}},
		{Role: codec.RoleAssistant, Parts: []codec.Part{{Kind: codec.PartToolCall, ID: id, Name: "f", Arguments: "{}"}}},
		{Role: codec.RoleUser, Parts: []codec.Part{{Kind: codec.PartToolResult, ID: id, Name: "f",
			Content: []codec.Part{{Kind: codec.PartText, Text: "4"}}}}}}}
	out, _, err := anthropic.AppendRequestOptions(nil, &r, anthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("CikBnKam")) || !bytes.Contains(out, []byte(`"id":"gcall_r1_0"`)) ||
		!bytes.Contains(out, []byte(`"tool_use_id":"gcall_r1_0"`)) {
		t.Errorf("request %s", out)
	}
}

// TestRequestReuse: a canonical request decoded into again holds nothing of
// the previous one (the decoder reuses slices and pooled wire structs).
func TestRequestReuse(t *testing.T) {
	big := readFile(t, filepath.Join(wireDir, "messages_request_tools.json"))
	small := []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]}`)
	var fresh, reused codec.Request
	if err := anthropic.DecodeRequest(small, &fresh); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := anthropic.DecodeRequest(big, &reused); err != nil {
			t.Fatal(err)
		}
		if err := anthropic.DecodeRequest(small, &reused); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := sameShape(t, &fresh), sameShape(t, &reused); !bytes.Equal(a, b) {
		t.Errorf("reused request differs:\n%s\n%s", b, a)
	}
}

// TestControlCharacters: a raw control character inside a string (invalid
// JSON that sonic lets through) is accepted where the gateway re-encodes the
// string, and rejected where it would copy it verbatim.
func TestControlCharacters(t *testing.T) {
	var r codec.Request
	body := "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"a\x01b\"}]}"
	if err := anthropic.DecodeRequest([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	out, _, _ := anthropic.AppendRequest(nil, &r)
	if !json.Valid(out) || !bytes.Contains(out, []byte(`"a\u0001b"`)) {
		t.Errorf("re-encoded as %s", out)
	}
	body = "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"tools\":[{\"name\":\"t\",\"input_schema\":{\"description\":\"x\x01\"}}]}"
	if err := anthropic.DecodeRequest([]byte(body), &r); err == nil || err.Param != "tools.0.input_schema" {
		t.Errorf("a control character in a verbatim schema: %v", err)
	}
}
