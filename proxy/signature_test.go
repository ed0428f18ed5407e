package proxy_test

// Multi-turn tool conversations across styles, the way an agent holds them:
// the client gets turn 1 through its official SDK, sends the assistant's
// answer back as the SDK gave it plus its tool results, and the upstream
// mock checks turn 2 as the provider would (Anthropic verifies thinking
// signatures, Gemini the thought signature of a turn's first call).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"
)

// thoughtSig is the thoughtSignature the Gemini mock puts on its last
// thought part (base64 with '+', '/' and padding, as Gemini sends them).
const thoughtSig = "Cr4BAdHtim+/q9XkVd1q3cOgF3e2vK5hR0o/tb4X7nPz+Yq1wGm8sS0="

// toolNames are the functions of the wire fixtures' tool calls.
var toolNames = []string{"get_weather", "get_local_time"}

// checkedUpstream is a provider mock for a two-turn tool conversation. It
// answers every request with the provider's transcript; a request that
// carries tool results is checked first, and a failed check is answered with
// 400 in the provider's shape, as the provider rejects a history that lost
// its signatures.
type checkedUpstream struct {
	*mockUpstream
	channel string // YAML of a gateway channel to it

	mu      sync.Mutex
	checked int
	failure error
}

// provider is what checkedUpstream needs to know of a provider's wire.
type provider struct {
	typ, model string
	path       string // base_url's path
	results    string // marks a request that carries tool results
	stream     func(r *http.Request, body []byte) bool
	reject     func(msg string) []byte
}

var (
	anthropicWire = provider{
		typ: "anthropic", model: "claude-x", results: `"tool_result"`,
		stream: func(_ *http.Request, body []byte) bool { return bytes.Contains(body, []byte(`"stream":true`)) },
		reject: func(msg string) []byte {
			m, _ := json.Marshal(msg)
			return fmt.Appendf(nil, `{"type":"error","error":{"type":"invalid_request_error","message":%s},"request_id":"req_011CWxR4tN8mVq2bYz7LsKc3"}`, m)
		},
	}
	openaiWire = provider{
		typ: "openai", model: "gpt-4o-mini", path: "/v1", results: `"role":"tool"`,
		stream: func(_ *http.Request, body []byte) bool { return bytes.Contains(body, []byte(`"stream":true`)) },
		reject: func(msg string) []byte {
			b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}}, "", "    ")
			return append(b, '\n')
		},
	}
	geminiWire = provider{
		typ: "gemini", model: "gemini-x", results: `"functionResponse"`,
		stream: func(r *http.Request, _ []byte) bool {
			return strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse"
		},
		reject: func(msg string) []byte {
			b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}, "", "  ")
			return append(b, '\n')
		},
	}
)

// newCheckedUpstream serves whole (non-stream) and stream (SSE events) and
// checks follow-up turns with check.
func newCheckedUpstream(t *testing.T, p provider, whole []byte, stream [][]byte, check func(body []byte) error) *checkedUpstream {
	u := &checkedUpstream{}
	u.mockUpstream = newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte(p.results)) {
			if err := u.check(check, body); err != nil {
				jsonReply(400, p.reject(err.Error()))(w, r, body)
				return
			}
		}
		if p.stream(r, body) {
			streamReply(stream, 0)(w, r, body)
			return
		}
		jsonReply(200, whole)(w, r, body)
	})
	u.channel = fmt.Sprintf("  - {name: up, type: %s, base_url: %q, api_keys: [%s], models: [%s]}\n",
		p.typ, u.srv.URL+p.path, upstreamKey, p.model)
	return u
}

func (u *checkedUpstream) check(check func([]byte) error, body []byte) error {
	err := check(body)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.checked++
	if err != nil && u.failure == nil {
		u.failure = err
	}
	return err
}

// verify fails t unless the follow-up turn reached the upstream and passed
// its check; err is what the client's SDK said of that turn.
func (u *checkedUpstream) verify(t *testing.T, err error) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.failure != nil:
		t.Fatalf("upstream rejected turn 2: %v", u.failure)
	case u.checked == 0:
		t.Fatalf("turn 2 never reached the upstream with tool results (client error: %v)", err)
	case err != nil:
		t.Fatalf("turn 2: %v", err)
	}
}

// sigTag shortens a signature for messages while still telling any two apart.
func sigTag(s string) string {
	if s == "" {
		return "-"
	}
	h := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%.6s…[%d]%s", s, len(s), hex.EncodeToString(h[:4]))
}

// The Anthropic side.

// anthropicBlock is one content block of a Messages request, as sent.
type anthropicBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
}

// anthropicTranscript is Anthropic's answer to turn 1, whole and streamed,
// and what that answer means (read from the transcript by the SDK).
func anthropicTranscript(t *testing.T, stream bool) (whole []byte, events [][]byte, want anthropic.Message) {
	whole = wire(t, "anthropic/messages_response_thinking_tool.json")
	events = splitSSE(wire(t, "anthropic/messages_stream_thinking_tool.sse"))
	if !stream {
		if err := json.Unmarshal(whole, &want); err != nil {
			t.Fatal(err)
		}
		return whole, events, want
	}
	for _, ev := range events {
		_, data, _ := bytes.Cut(ev, []byte("data: "))
		var e anthropic.MessageStreamEventUnion
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if err := want.Accumulate(e); err != nil {
			t.Fatal(err)
		}
	}
	return whole, events, want
}

// anthropicSigned lists the blocks Anthropic verifies or pairs, in order:
// thinking (text and signature), redacted thinking and tool calls.
func anthropicSigned(blocks []anthropicBlock) []string {
	var out []string
	for _, b := range blocks {
		switch b.Type {
		case "thinking":
			out = append(out, "thinking "+sigTag(b.Thinking)+" "+sigTag(b.Signature))
		case "redacted_thinking":
			out = append(out, "redacted_thinking "+sigTag(b.Data))
		case "tool_use":
			out = append(out, "tool_use "+b.ID+" "+b.Name)
		}
	}
	return out
}

// checkAnthropicHistory checks a Messages request whose last assistant turn
// should be want, followed by a user turn with a tool_result for each call.
func checkAnthropicHistory(want anthropic.Message) func([]byte) error {
	var wantBlocks []anthropicBlock
	var ids []string
	for _, b := range want.Content {
		wantBlocks = append(wantBlocks, anthropicBlock{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data, ID: b.ID, Name: b.Name})
		if b.Type == "tool_use" {
			ids = append(ids, b.ID)
		}
	}
	return func(body []byte) error {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err
		}
		turns := make([][]anthropicBlock, len(req.Messages))
		last := -1
		for i, m := range req.Messages {
			json.Unmarshal(m.Content, &turns[i]) // a string content has no blocks
			if m.Role == "assistant" {
				last = i
			}
		}
		if last < 0 || last+1 >= len(turns) {
			return fmt.Errorf("no assistant turn followed by tool results in %s", body)
		}
		if got, w := anthropicSigned(turns[last]), anthropicSigned(wantBlocks); !slices.Equal(got, w) {
			return fmt.Errorf("messages.%d: thinking and tool_use blocks %q, want %q", last, got, w)
		}
		var results []string
		for _, b := range turns[last+1] {
			if b.Type == "tool_result" {
				results = append(results, b.ToolUseID)
			}
		}
		if !slices.Equal(results, ids) {
			return fmt.Errorf("messages.%d: tool_result ids %q, want %q", last+1, results, ids)
		}
		return nil
	}
}

func anthropicSignatureUpstream(t *testing.T, stream bool) *checkedUpstream {
	whole, events, want := anthropicTranscript(t, stream)
	return newCheckedUpstream(t, anthropicWire, whole, events, checkAnthropicHistory(want))
}

// The Gemini side.

// geminiPart is one part of a generateContent request or answer.
type geminiPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		Name string `json:"name"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name string `json:"name"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// signLastThought gives the last thought part of a Gemini transcript the
// thoughtSignature thoughtSig, sep being the transcript's own spacing
// between fields.
func signLastThought(b []byte, sep string) []byte {
	const thought = `"thought": true`
	i := bytes.LastIndex(b, []byte(thought)) + len(thought)
	return slices.Concat(b[:i], []byte(","+sep+`"thoughtSignature": "`+thoughtSig+`"`), b[i:])
}

var sseData = regexp.MustCompile(`(?m)^data: (.*)\r?$`)

// geminiTranscript is Gemini's answer to turn 1 (thinking, then two parallel
// calls with the signature on the first), whole and streamed, its last
// thought signed too; want is the model turn it gives, parts of every chunk
// in order.
func geminiTranscript(t *testing.T, stream bool) (whole []byte, events [][]byte, want []geminiPart) {
	whole = signLastThought(wire(t, "gemini/generate_response_function_call.json"), "\n            ")
	sse := signLastThought(wire(t, "gemini/stream_sse_thinking_function.sse"), "")
	chunks := [][]byte{whole}
	if stream {
		chunks = nil
		for _, m := range sseData.FindAllSubmatch(sse, -1) {
			chunks = append(chunks, m[1])
		}
	}
	for _, c := range chunks {
		var r struct {
			Candidates []struct{ Content geminiContent }
		}
		if err := json.Unmarshal(c, &r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Candidates[0].Content.Parts...)
	}
	return whole, splitSSE(sse), want
}

// geminiSigned lists the parts of a model turn whose signatures Gemini
// reads, in order: thoughts with a signature (unsigned thought text is
// ignored), function calls (signed or not) and any other signed part.
func geminiSigned(parts []geminiPart) []string {
	var out []string
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			out = append(out, "call "+p.FunctionCall.Name+" "+sigTag(p.ThoughtSignature))
		case p.ThoughtSignature == "":
		case p.Thought:
			out = append(out, "thought "+sigTag(p.ThoughtSignature))
		default:
			out = append(out, "part "+sigTag(p.ThoughtSignature))
		}
	}
	return out
}

// checkGeminiHistory checks a generateContent request whose last model turn
// should carry want's signatures on the same parts, followed by a user turn
// with a functionResponse named after each call.
func checkGeminiHistory(want []geminiPart) func([]byte) error {
	var names []string
	for _, p := range want {
		if p.FunctionCall != nil {
			names = append(names, p.FunctionCall.Name)
		}
	}
	return func(body []byte) error {
		var req struct{ Contents []geminiContent }
		if err := json.Unmarshal(body, &req); err != nil {
			return err
		}
		last := -1
		for i, c := range req.Contents {
			if c.Role == "model" {
				last = i
			}
		}
		if last < 0 || last+1 >= len(req.Contents) {
			return fmt.Errorf("no model turn followed by function responses in %s", body)
		}
		if got, w := geminiSigned(req.Contents[last].Parts), geminiSigned(want); !slices.Equal(got, w) {
			return fmt.Errorf("contents[%d]: signed parts %q, want %q", last, got, w)
		}
		var got []string
		for _, p := range req.Contents[last+1].Parts {
			if p.FunctionResponse != nil {
				got = append(got, p.FunctionResponse.Name)
			}
		}
		if !slices.Equal(got, names) {
			return fmt.Errorf("contents[%d]: functionResponse names %q, want %q", last+1, got, names)
		}
		return nil
	}
}

func geminiSignatureUpstream(t *testing.T, stream bool) *checkedUpstream {
	whole, events, want := geminiTranscript(t, stream)
	return newCheckedUpstream(t, geminiWire, whole, events, checkGeminiHistory(want))
}

// The OpenAI side: no signatures, but the tool calls must pair up.

// checkOpenAIHistory checks a chat request whose last assistant message
// should make want's tool calls, followed by a tool message for each.
func checkOpenAIHistory(want openai.ChatCompletionMessage) func([]byte) error {
	var calls, ids []string
	for _, c := range want.ToolCalls {
		calls, ids = append(calls, c.ID+" "+c.Function.Name), append(ids, c.ID)
	}
	return func(body []byte) error {
		var req struct {
			Messages []struct {
				Role      string `json:"role"`
				ToolCalls []struct {
					ID       string                `json:"id"`
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err
		}
		last := -1
		for i, m := range req.Messages {
			if m.Role == "assistant" {
				last = i
			}
		}
		if last < 0 {
			return fmt.Errorf("no assistant message in %s", body)
		}
		var got, results []string
		for _, c := range req.Messages[last].ToolCalls {
			got = append(got, c.ID+" "+c.Function.Name)
		}
		for _, m := range req.Messages[last+1:] {
			if m.Role == "tool" {
				results = append(results, m.ToolCallID)
			}
		}
		if !slices.Equal(got, calls) || !slices.Equal(results, ids) {
			return fmt.Errorf("messages.%d: tool calls %q answered by %q, want %q answered in order", last, got, results, calls)
		}
		return nil
	}
}

func openaiToolUpstream(t *testing.T, _ bool) *checkedUpstream {
	whole := wire(t, "openai/chat_response_tool_calls.json")
	var want openai.ChatCompletion // the stream makes the same calls
	if err := json.Unmarshal(whole, &want); err != nil {
		t.Fatal(err)
	}
	events := splitSSE(wire(t, "openai/chat_stream_tool_calls.sse"))
	return newCheckedUpstream(t, openaiWire, whole, events, checkOpenAIHistory(want.Choices[0].Message))
}

// The clients. Each runs turn 1, answers every tool call and returns what
// its SDK said of turn 2.

const toolQuestion = "What are the weather and the local time in the city of this trip?"

func anthropicToolTurns(t *testing.T, url, model string, stream bool) error {
	c := anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey(openKey), aoption.WithMaxRetries(0))
	p := anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 4096, Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(toolQuestion))},
	}
	for _, name := range toolNames {
		p.Tools = append(p.Tools, anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}, name))
	}
	first, err := anthropicTurn(c, p, stream)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	var results []anthropic.ContentBlockParamUnion
	for _, b := range first.Content {
		if b.Type == "tool_use" {
			results = append(results, anthropic.NewToolResultBlock(b.ID, `{"ok":true}`, false))
		}
	}
	if len(results) == 0 {
		t.Fatalf("turn 1 has no tool_use: %+v", first.Content)
	}
	p.Messages = append(p.Messages, first.ToParam(), anthropic.NewUserMessage(results...))
	_, err = anthropicTurn(c, p, stream)
	return err
}

func anthropicTurn(c anthropic.Client, p anthropic.MessageNewParams, stream bool) (anthropic.Message, error) {
	ctx := context.Background()
	if !stream {
		m, err := c.Messages.New(ctx, p)
		if err != nil {
			return anthropic.Message{}, err
		}
		return *m, nil
	}
	s := c.Messages.NewStreaming(ctx, p)
	var acc anthropic.Message
	for s.Next() {
		if err := acc.Accumulate(s.Current()); err != nil {
			return acc, err
		}
	}
	return acc, s.Err()
}

func openaiToolTurns(t *testing.T, url, model string, stream bool) error {
	c := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey(openKey), option.WithMaxRetries(0))
	p := openai.ChatCompletionNewParams{
		Model: openai.ChatModel(model), ReasoningEffort: openai.ReasoningEffortMedium,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(toolQuestion)},
	}
	for _, name := range toolNames {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: name,
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}))
	}
	msg, thinking, err := openaiTurn(c, p, stream)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	if len(msg.ToolCalls) == 0 {
		t.Fatalf("turn 1 has no tool calls: %+v", msg)
	}
	// The reasoning rides in fields the SDK does not know; a client that
	// keeps them sends them back on the assistant message.
	assistant := msg.ToAssistantMessageParam()
	assistant.SetExtraFields(thinking)
	p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
	for _, call := range msg.ToolCalls {
		p.Messages = append(p.Messages, openai.ToolMessage(`{"ok":true}`, call.ID))
	}
	_, _, err = openaiTurn(c, p, stream)
	return err
}

// openaiTurn returns the assistant's message and its reasoning extension
// fields (reasoning_content, thinking_blocks) as a client collects them:
// from the message, or from every chunk's delta.
func openaiTurn(c openai.Client, p openai.ChatCompletionNewParams, stream bool) (openai.ChatCompletionMessage, map[string]any, error) {
	ctx := context.Background()
	thinking := map[string]any{}
	if !stream {
		r, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			return openai.ChatCompletionMessage{}, nil, err
		}
		msg := r.Choices[0].Message
		for _, k := range []string{"reasoning_content", "thinking_blocks"} {
			if f, ok := msg.JSON.ExtraFields[k]; ok {
				thinking[k] = json.RawMessage(f.Raw())
			}
		}
		return msg, thinking, nil
	}
	s := c.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	var reasoning string
	var blocks []json.RawMessage
	for s.Next() {
		acc.AddChunk(s.Current())
		for _, ch := range s.Current().Choices {
			var text string
			var more []json.RawMessage
			if json.Unmarshal([]byte(ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()), &text) == nil {
				reasoning += text
			}
			if json.Unmarshal([]byte(ch.Delta.JSON.ExtraFields["thinking_blocks"].Raw()), &more) == nil {
				blocks = append(blocks, more...)
			}
		}
	}
	if err := s.Err(); err != nil || len(acc.Choices) == 0 {
		return openai.ChatCompletionMessage{}, nil, fmt.Errorf("stream: %v (%d choices)", err, len(acc.Choices))
	}
	thinking["reasoning_content"], thinking["thinking_blocks"] = reasoning, blocks
	return acc.Choices[0].Message, thinking, nil
}

func geminiToolTurns(t *testing.T, url, model string, stream bool) error {
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: openKey, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}, Tools: []*genai.Tool{{}}}
	for _, name := range toolNames {
		cfg.Tools[0].FunctionDeclarations = append(cfg.Tools[0].FunctionDeclarations, &genai.FunctionDeclaration{Name: name,
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}})
	}
	contents := []*genai.Content{genai.NewContentFromText(toolQuestion, genai.RoleUser)}
	first, err := geminiTurn(c, model, contents, cfg, stream)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	var results []*genai.Part
	for _, p := range first.Parts {
		if p.FunctionCall != nil {
			r := genai.NewPartFromFunctionResponse(p.FunctionCall.Name, map[string]any{"ok": true})
			r.FunctionResponse.ID = p.FunctionCall.ID
			results = append(results, r)
		}
	}
	if len(results) == 0 {
		t.Fatalf("turn 1 has no function calls: %+v", first.Parts)
	}
	contents = append(contents, first, genai.NewContentFromParts(results, genai.RoleUser))
	_, err = geminiTurn(c, model, contents, cfg, stream)
	return err
}

// geminiTurn returns the model's turn: its parts, of every chunk in order
// when streamed.
func geminiTurn(c *genai.Client, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig, stream bool) (*genai.Content, error) {
	ctx := context.Background()
	if !stream {
		r, err := c.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return nil, err
		}
		return r.Candidates[0].Content, nil
	}
	turn := &genai.Content{Role: genai.RoleModel}
	for r, err := range c.Models.GenerateContentStream(ctx, model, contents, cfg) {
		if err != nil {
			return nil, err
		}
		for _, cand := range r.Candidates {
			if cand.Content != nil {
				turn.Parts = append(turn.Parts, cand.Content.Parts...)
			}
		}
	}
	return turn, nil
}

// TestSignatureRoundTrips: thinking and thought signatures, and tool call
// ids, survive a tool round trip between every pair of styles, streamed and
// not, against a provider that checks them.
func TestSignatureRoundTrips(t *testing.T) {
	clients := []struct {
		style string
		turns func(t *testing.T, url, model string, stream bool) error
	}{
		{"anthropic", anthropicToolTurns},
		{"openai", openaiToolTurns},
		{"gemini", geminiToolTurns},
		// API version 2026-10-21: translated even for an Anthropic
		// channel, which speaks 2023-06-01.
		{"anthropic-v2", anthropicV2ToolTurns},
	}
	upstreams := []struct {
		style string
		model string
		start func(t *testing.T, stream bool) *checkedUpstream
	}{
		{"anthropic", anthropicWire.model, anthropicSignatureUpstream},
		{"gemini", geminiWire.model, geminiSignatureUpstream},
		{"openai", openaiWire.model, openaiToolUpstream},
	}
	for _, c := range clients {
		for _, u := range upstreams {
			if c.style == u.style {
				continue // pass-through: the bytes go as they are
			}
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s_to_%s/stream=%v", c.style, u.style, stream), func(t *testing.T) {
					t.Parallel() // each has its own gateway and upstream
					up := u.start(t, stream)
					tg := startGateway(t, up.channel)
					up.verify(t, c.turns(t, tg.url, u.model, stream))
				})
			}
		}
	}
}
