package openai_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// TestRelayRenamesModel checks the model RelayEvent renames: the
// top-level one, whatever its spelling, and nothing that only looks like
// it; an event that is not JSON is refused.
func TestRelayRenamesModel(t *testing.T) {
	// f checks that relaying b renames its model, which was want, when ok,
	// and leaves b as it is when not.
	f := func(b, want string, ok bool) {
		t.Helper()
		r := codec.Relay{Model: "pub", IncludeUsage: true}
		out, err := openai.Dialect.RelayEvent(nil, []byte(b), []byte(b), &r)
		if err != nil {
			if ok || json.Valid([]byte(b)) {
				t.Errorf("RelayEvent(%s): %v", b, err)
			}
			return
		}
		if !ok {
			if string(out) != b {
				t.Errorf("RelayEvent(%s) = %s, want it as it is", b, out)
			}
			return
		}
		var in, got struct{ Model string }
		if json.Unmarshal([]byte(b), &in) != nil || json.Unmarshal(out, &got) != nil || in.Model != want || got.Model != "pub" ||
			want != "" && !strings.Contains(b, `\`) && strings.Replace(b, `"`+want+`"`, `"pub"`, 1) != string(out) {
			t.Errorf("RelayEvent(%s) = %s, want model %q renamed", b, out, want)
		}
	}
	for _, c := range []string{chunkRole, chunkContent, chunkFinish, chunkUsage, chunkNoUsage} {
		f(c, "gpt-4o-mini-2024-07-18", true)
	}
	f(chunkToolCall, "gpt-4o", true)
	f(`{"id":"x", "model": "gpt-4o" ,"choices":[]}`, "gpt-4o", true)
	f("{\"id\":\"x\",\n  \"model\" :\n\t\"gpt-4o\"\n}", "gpt-4o", true)
	f(`{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[]}`, "", true) // Azure's first chunk

	// String contents that look like a model key are not keys.
	f(`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"model\":\"x\"}"}}]}}],"model":"real"}`, "real", true)
	f(`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"model\": \"x\"}"}}]}}]}`, "", false)
	f(`{"choices":[{"delta":{"content":"say \"model\":\"evil\""}}],"model":"real"}`, "real", true)
	f(`{"object":"model","id":"gpt-4o","owned_by":"openai"}`, "", false) // "model" as a value
	f(`{"object":"model","model":"m"}`, "m", true)
	f(`{"models":"x","model_name":"y"}`, "", false)
	f(`{"a\"model":"evil","model":"real"}`, "real", true) // a key ending in an escaped quote and "model"
	f(`{"a\\":1,"model":"real"}`, "real", true)           // an escaped backslash before a real quote
	f(`{"x":{"model":"nested"}}`, "", false)              // not the chunk's model

	// A name or a key with escapes is renamed as a client reads it.
	f(`{"model":"gpt\u002d4o"}`, "gpt-4o", true)
	f(`{"mod\u0065l":"gpt-4o"}`, "gpt-4o", true)
	// No string value.
	f(`{"model":null}`, "", false)
	f(`{"model":4}`, "", false)
	f(`{"model":`, "", false)
	f(`{"model":  `, "", false)
	f(`{"model":"unterminated`, "", false)
	f(``, "", false)
}

func TestDecodeUsage(t *testing.T) {
	f := func(b string, want codec.Usage) {
		t.Helper()
		got, err := openai.DecodeUsage([]byte(b))
		if err != nil || got != want {
			t.Errorf("DecodeUsage(%s) = %+v, %v; want %+v", b, got, err, want)
		}
	}
	f(`{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29}`, codec.Usage{Input: 19, Output: 10})
	f(`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":192,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
		codec.Usage{Input: 2006, Output: 300, CachedInput: 1920, Reasoning: 192})
	f(`{"prompt_tokens":5,"completion_tokens":0,"prompt_tokens_details":null,"completion_tokens_details":null}`, codec.Usage{Input: 5})
	f(`{}`, codec.Usage{})
	usage := chunkUsage[strings.Index(chunkUsage, `"usage":`)+len(`"usage":`) : len(chunkUsage)-1]
	f(usage, codec.Usage{Input: 19, Output: 10})

	for _, b := range []string{``, `{`, `[]`, `{"prompt_tokens":"19"}`} {
		if u, err := openai.DecodeUsage([]byte(b)); err == nil {
			t.Errorf("DecodeUsage(%s) = %+v, want an error", b, u)
		}
	}
}

func TestErrorRoundTrip(t *testing.T) {
	f := func(e codec.Error, wantType string) {
		t.Helper()
		b := openai.AppendError([]byte("x"), &e)[1:]
		var w struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatalf("AppendError(%+v) = %s: %v", e, b, err)
		}
		// Empty param and code are JSON nulls.
		if w.Error.Type != wantType || (w.Error.Param == nil) != (e.Param == "") || (w.Error.Code == nil) != (e.Code == "") {
			t.Errorf("AppendError(%+v) = %s, want type %q", e, b, wantType)
		}
		got, ok := openai.DecodeError(e.Status, b)
		want := codec.Error{Status: e.Status, Kind: codec.KindForStatus(e.Status),
			Message: strings.ToValidUTF8(e.Message, "\uFFFD"), Type: wantType, Param: e.Param, Code: e.Code}
		if !ok || got != want {
			t.Errorf("DecodeError(AppendError(%+v)) = %+v, %v; want %+v", e, got, ok, want)
		}
	}
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "you must provide a model parameter", Param: "model"}, "invalid_request_error")
	f(codec.Error{Status: 401, Kind: codec.KindAuthentication, Message: "Incorrect API key provided: sk-ros...abcd.", Code: "invalid_api_key"}, "invalid_request_error")
	f(codec.Error{Status: 403, Kind: codec.KindPermission, Message: "key may not use \"gpt-4o\""}, "permission_error")
	f(codec.Error{Status: 429, Kind: codec.KindRateLimitTokens, Message: "Rate limit reached\nfor tokens per min (TPM)", Code: "rate_limit_exceeded"}, "tokens")
	f(codec.Error{Status: 429, Kind: codec.KindRateLimitRequests, Message: "rpm"}, "requests")
	f(codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "upstream said \\ \u2028 \x00 \xff"}, "server_error")
	f(codec.Error{Status: 504, Kind: codec.KindTimeout, Message: "upstream timed out"}, "server_error")
	f(codec.Error{Status: 503, Kind: codec.KindUnavailable, Message: "no channel"}, "server_error")
	f(codec.Error{Status: 500, Kind: codec.KindServer, Message: "gateway fault (request id 42)"}, "server_error")
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Type: "invalid_request_error", Message: "relayed", Code: "context_length_exceeded", Param: "messages"}, "invalid_request_error")
	f(codec.Error{Status: 400, Kind: codec.KindServer, Type: "custom_type", Message: "the type wins over the kind"}, "custom_type")
	f(codec.Error{Status: 400, Kind: codec.ErrorKind(200), Message: "unknown kind"}, "")
}

func TestDecodeError(t *testing.T) {
	f := func(status int, b string, want codec.Error) {
		t.Helper()
		got, ok := openai.DecodeError(status, []byte(b))
		if !ok || got != want {
			t.Errorf("DecodeError(%d, %s) = %+v, %v; want %+v", status, b, got, ok, want)
		}
	}
	f(404, `{"error":{"message":"The model `+"`gpt-5x`"+` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
		codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "The model `gpt-5x` does not exist or you do not have access to it.", Type: "invalid_request_error", Code: "model_not_found"})
	f(429, "{\n  \"error\": {\n    \"message\": \"Rate limit reached\",\n    \"type\": \"tokens\",\n    \"param\": null,\n    \"code\": \"rate_limit_exceeded\"\n  }\n}\n",
		codec.Error{Status: 429, Kind: codec.KindRateLimitRequests, Message: "Rate limit reached", Type: "tokens", Code: "rate_limit_exceeded"})
	f(500, `{"error":{"message":"boom","type":"server_error","param":null,"code":500}}`,
		codec.Error{Status: 500, Kind: codec.KindServer, Message: "boom", Type: "server_error", Code: "500"})
	f(400, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`,
		codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "bad", Type: "invalid_request_error", Param: "messages"})

	for _, b := range []string{``, `not json`, `{"error":"bad"}`, `{"error":null}`, `{"detail":"Not Found"}`, `[]`} {
		if e, ok := openai.DecodeError(502, []byte(b)); ok {
			t.Errorf("DecodeError(%s) = %+v, true; want false", b, e)
		}
	}
}

// wireChunk is a chunk or response as encoding/json reads it.
type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func decodeStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("not valid JSON: %s", b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

func TestAppendChunk(t *testing.T) {
	c := openai.Completion{ID: "chatcmpl-1", Created: 1741570283, Model: "gpt-4o-mini"}
	f := func(role bool, content, finish string) {
		t.Helper()
		b := c.AppendChunk(nil, role, content, finish)
		var w wireChunk
		decodeStrict(t, b, &w)
		if w.ID != c.ID || w.Object != "chat.completion.chunk" || w.Created != c.Created || w.Model != c.Model || w.Usage != nil || len(w.Choices) != 1 {
			t.Fatalf("AppendChunk = %s", b)
		}
		ch := w.Choices[0]
		switch {
		case ch.Index != 0 || ch.Delta == nil || ch.Delta.Content == nil || *ch.Delta.Content != strings.ToValidUTF8(content, "\uFFFD"):
			t.Errorf("AppendChunk(%q): delta of %s", content, b)
		case role != (ch.Delta.Role != nil) || role && *ch.Delta.Role != "assistant":
			t.Errorf("AppendChunk(role %v): %s", role, b)
		case (finish == "") != (ch.FinishReason == nil) || finish != "" && *ch.FinishReason != finish:
			t.Errorf("AppendChunk(finish %q): %s", finish, b)
		}
		// The relay reads what the encoder writes.
		if out, u := relayed(t, b); !bytes.Equal(out, b) || u != (codec.Usage{}) {
			t.Errorf("the relay made %s of a content chunk, usage %+v: %s", out, u, b)
		}
	}
	f(true, "", "")
	f(false, "Hello", "")
	f(false, "quotes \" and \\ and\nnewlines\t\u0001 and 🙂 and \xff", "")
	f(false, "", "stop")
	f(false, "", "length")
}

// relayed is what the relay makes of the chunk b for a client that did not
// ask for usage: the bytes it passes on, and the usage it reads.
func relayed(t *testing.T, b []byte) ([]byte, codec.Usage) {
	t.Helper()
	var r codec.Relay
	out, err := openai.Dialect.RelayEvent(nil, b, b, &r)
	if err != nil {
		t.Fatalf("RelayEvent(%s): %v", b, err)
	}
	return out, r.Usage
}

func TestAppendUsageChunk(t *testing.T) {
	c := openai.Completion{ID: "chatcmpl-1", Created: 1, Model: "m"}
	for _, u := range []codec.Usage{{}, {Input: 19, Output: 10}, {Input: 2006, Output: 300, CachedInput: 1920, Reasoning: 192}} {
		b := c.AppendUsageChunk(nil, u)
		var w wireChunk
		decodeStrict(t, b, &w)
		if w.Object != "chat.completion.chunk" || w.Choices == nil || len(w.Choices) != 0 || w.Usage == nil {
			t.Fatalf("AppendUsageChunk(%+v) = %s", u, b)
		}
		if out, got := relayed(t, b); len(out) != 0 || got != u {
			t.Errorf("the relay made %q of the usage chunk %s, usage %+v; want it left out, usage %+v", out, b, got, u)
		}
	}
}

func TestAppendResponse(t *testing.T) {
	c := openai.Completion{ID: "chatcmpl-B9MBs8Cj", Created: 1741569952, Model: "claude-sonnet-4-5"}
	u := codec.Usage{Input: 19, Output: 10, CachedInput: 3}
	b := c.AppendResponse(nil, "Hello! \"How\" can I help?\n", "stop", u)
	var w wireChunk
	decodeStrict(t, b, &w)
	if w.ID != c.ID || w.Object != "chat.completion" || w.Created != c.Created || w.Model != c.Model || len(w.Choices) != 1 {
		t.Fatalf("AppendResponse = %s", b)
	}
	ch := w.Choices[0]
	if ch.Message == nil || ch.Message.Role != "assistant" || ch.Message.Content != "Hello! \"How\" can I help?\n" ||
		ch.FinishReason == nil || *ch.FinishReason != "stop" {
		t.Errorf("AppendResponse choice: %s", b)
	}
	want := &wireUsage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29, PromptTokensDetails: &struct {
		CachedTokens int `json:"cached_tokens"`
	}{3}}
	if !reflect.DeepEqual(w.Usage, want) {
		t.Errorf("AppendResponse usage: %s", b)
	}
	if b := c.AppendResponse(nil, "", "", codec.Usage{}); !json.Valid(b) || !strings.Contains(string(b), `"finish_reason":null`) {
		t.Errorf("AppendResponse without a finish reason = %s", b)
	}
}

func TestAppendUsage(t *testing.T) {
	f := func(u codec.Usage, want string) {
		t.Helper()
		if got := openai.AppendUsage([]byte("x"), u); string(got) != "x"+want {
			t.Errorf("AppendUsage(%+v) = %s, want x%s", u, got, want)
		}
		if got, err := openai.DecodeUsage([]byte(want)); err != nil || got != (codec.Usage{Input: u.Input, Output: u.Output, CachedInput: u.CachedInput, Reasoning: u.Reasoning}) {
			t.Errorf("DecodeUsage(%s) = %+v, %v", want, got, err)
		}
	}
	f(codec.Usage{}, `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`)
	f(codec.Usage{Input: 19, Output: 10, Estimated: true}, `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29}`)
	f(codec.Usage{Input: 2006, Output: 300, CachedInput: 1920, Reasoning: 192},
		`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":192}}`)
}

func TestAppendModelList(t *testing.T) {
	f := func(ids []string) {
		t.Helper()
		b := openai.AppendModelList(nil, ids, 1700000000, "rosetta")
		var w struct {
			Object string `json:"object"`
			Data   []struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Created int64  `json:"created"`
				OwnedBy string `json:"owned_by"`
			} `json:"data"`
		}
		decodeStrict(t, b, &w)
		if w.Object != "list" || w.Data == nil || len(w.Data) != len(ids) {
			t.Fatalf("AppendModelList(%q) = %s", ids, b)
		}
		for i, m := range w.Data {
			if m.ID != ids[i] || m.Object != "model" || m.Created != 1700000000 || m.OwnedBy != "rosetta" {
				t.Errorf("AppendModelList(%q): entry %d is %+v", ids, i, m)
			}
		}
	}
	f([]string{})
	f([]string{"gpt-4o"})
	f([]string{"gpt-4o-mini", "claude-sonnet-4-5", `we"ird\name`, "modèle"})
}

// TestRelayEvent checks the helper that the relay benchmarks time.
func TestRelayEvent(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, n := relayEvent([]byte("x"), []byte(in), "my-model")
		if string(got) != "x"+want || n != len(in) {
			t.Errorf("relayEvent(%q) = %q, %d; want x%q, %d", in, got, n, want, len(in))
		}
	}
	f("data: "+chunkContent+"\n\n", "data: "+strings.Replace(chunkContent, "gpt-4o-mini-2024-07-18", "my-model", 1)+"\n\n")
	f("data: "+chunkUsage+"\n\n", "")
	f("data: [DONE]\n\n", "data: [DONE]\n\n")
	f(": ping\n\n", ": ping\n\n")
}

// TestDecodeUsageOffset: a usage object that is not JSON is reported at
// the offset where it broke.
func TestDecodeUsageOffset(t *testing.T) {
	for b, want := range map[string]string{
		`{"prompt_tokens":12x}`:                          "invalid JSON at offset 19: want ',' or '}'",
		`{"prompt_tokens":1,"completion_tokens":tru}`:    "invalid JSON at offset 39: invalid value",
		`{"prompt_tokens_details":{"cached_tokens":1,}}`: "invalid JSON at offset 25: invalid value",
		`{"prompt_tokens":1,"total_tokens":[1,}`:         "invalid JSON at offset 34: invalid value",
		`{"prompt_tokens":1 "completion_tokens":2}`:      "invalid JSON at offset 19: want ',' or '}'",
		`[]`: "invalid JSON at offset 0: want a JSON object",
	} {
		if _, err := openai.DecodeUsage([]byte(b)); err == nil || err.Error() != want {
			t.Errorf("DecodeUsage(%s) = %v, want %q", b, err, want)
		}
	}
}
