package openai

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Encoding a canonical request for an OpenAI-compatible upstream. Choices
// (README.md has the full table):
//
//   - System parts become one system message; a message's tool results
//     become one tool message each, sent before the rest of the message
//     (OpenAI wants them right after the assistant's tool calls); images
//     inside tool results cannot go in a tool message, so they follow in
//     the user message, where the tool result stood.
//   - Thinking is not sent back: OpenAI rejects unknown message fields
//     ("Additional properties are not allowed") and some compatible servers
//     reject reasoning_content in the history. It is named in the dropped
//     list.
//   - Reasoning models (o1…, o3…, o4…, gpt-5… except gpt-5-chat…) get
//     max_completion_tokens and reasoning_effort, and lose temperature,
//     top_p and stop, which they reject; other models get max_tokens (the
//     one every compatible server knows) and no reasoning_effort, which
//     non-reasoning OpenAI models reject.
//   - Tool call ids longer than OpenAI's limit of 40 are replaced, in the
//     calls and in their results alike, by "call_" and 35 hex digits of
//     their SHA-256.
//   - Streams always ask for usage: the gateway counts tokens.

// AppendRequest appends the body of a chat completion request for r to
// dst, for an OpenAI-compatible upstream. dropped names the features of r
// the body cannot carry. The error is a 400 for a request that cannot be
// expressed (a tool schema that is not valid JSON, or no message left once
// thinking is dropped).
func AppendRequest(dst []byte, r *codec.Request) (_ []byte, dropped []string, _ *codec.Error) {
	if where, url := r.ForeignFile(codec.DialectOpenAI); where != "" {
		return dst, nil, invalid(where, codec.ForeignFileMessage(where, url))
	}
	e := requestEncoder{b: dst, r: r, reasoning: reasoningModel(r.Model)}
	if err := e.request(); err != nil {
		return dst, e.dropped, err
	}
	return e.b, e.dropped, nil
}

// maxCallID is the longest tool call id OpenAI accepts.
const maxCallID = 40

// reasoningModel reports whether an OpenAI model name is one of the
// reasoning models, which take reasoning_effort and max_completion_tokens
// and reject sampling settings. A provider prefix ("openai/o3") is ignored.
func reasoningModel(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	switch {
	case len(model) >= 2 && model[0] == 'o' && '1' <= model[1] && model[1] <= '9':
		return true
	case strings.HasPrefix(model, "gpt-5"):
		return !strings.Contains(model, "-chat")
	}
	return false
}

// effortFor returns the reasoning_effort for th: its Effort when it has a
// known one, else a level from the budget (below 2048 tokens "low", below
// 8192 "medium", else "high"; no budget: the model's default).
func effortFor(th *codec.Thinking) string {
	switch th.Effort {
	case "none", "minimal", "low", "medium", "high", "xhigh", "max":
		return th.Effort
	}
	switch {
	case !th.Enabled || th.Budget <= 0:
		return ""
	case th.Budget < 2048:
		return "low"
	case th.Budget < 8192:
		return "medium"
	}
	return "high"
}

type requestEncoder struct {
	b         []byte
	r         *codec.Request
	reasoning bool // the model is an OpenAI reasoning model
	dropped   []string
}

func (e *requestEncoder) drop(name string) { e.dropped = addDropped(e.dropped, name) }

// sep appends a comma unless an array or object has just been opened.
func (e *requestEncoder) sep() {
	if n := len(e.b); n > 0 && e.b[n-1] != '[' && e.b[n-1] != '{' {
		e.b = append(e.b, ',')
	}
}

func (e *requestEncoder) key(k string) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *requestEncoder) str(s string) { e.b = rawjson.AppendString(e.b, s) }

func (e *requestEncoder) request() *codec.Error {
	r := e.r
	e.b = append(e.b, '{')
	e.key("model")
	e.str(r.Model)
	e.key("messages")
	e.b = append(e.b, '[')
	e.system()
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Role == codec.RoleAssistant {
			e.assistant(m)
		} else {
			e.user(m)
		}
	}
	if e.b[len(e.b)-1] == '[' {
		return invalid("messages", "The request has no content that the OpenAI API can take.")
	}
	e.b = append(e.b, ']')
	if err := e.tools(); err != nil {
		return err
	}
	e.settings()
	if err := e.format(); err != nil {
		return err
	}
	if r.User != "" {
		e.key("user")
		e.str(r.User)
	}
	if r.Stream {
		e.key("stream")
		e.b = append(e.b, `true,"stream_options":{"include_usage":true}`...)
	}
	e.b = append(e.b, '}')
	return nil
}

func (e *requestEncoder) system() {
	n := 0
	for i := range e.r.System {
		if p := &e.r.System[i]; p.Kind != codec.PartText {
			e.drop("system." + p.Kind.String())
		} else if p.Text != "" {
			n++
		}
	}
	if n == 0 {
		return
	}
	e.sep()
	e.b = append(e.b, `{"role":"system","content":`...)
	e.textContent(e.r.System, n)
	e.b = append(e.b, '}')
}

// textContent appends the non-empty text parts of parts, n of them, as a
// content member's value: a string for one, an array of text parts for
// several. Empty texts carry nothing (and DecodeRequest skips them).
func (e *requestEncoder) textContent(parts []codec.Part, n int) {
	if n == 0 {
		e.b = append(e.b, `""`...)
		return
	}
	if n == 1 {
		for i := range parts {
			if isText(&parts[i]) {
				e.str(parts[i].Text)
				return
			}
		}
	}
	e.b = append(e.b, '[')
	for i := range parts {
		if isText(&parts[i]) {
			e.textPart(parts[i].Text)
		}
	}
	e.b = append(e.b, ']')
}

func isText(p *codec.Part) bool { return p.Kind == codec.PartText && p.Text != "" }

func (e *requestEncoder) textPart(text string) {
	e.sep()
	e.b = append(e.b, `{"type":"text","text":`...)
	e.str(text)
	e.b = append(e.b, '}')
}

func countText(parts []codec.Part) int {
	n := 0
	for i := range parts {
		if isText(&parts[i]) {
			n++
		}
	}
	return n
}

func (e *requestEncoder) user(m *codec.Message) {
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Kind == codec.PartToolResult {
			e.toolMessage(p)
		}
	}
	n, texts := 0, 0
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case codec.PartText:
			if p.Text != "" {
				n++
				texts++
			}
		case codec.PartImage:
			if p.Data != "" || p.URL != "" {
				n++
			} else {
				e.drop("image (no data)")
			}
		case codec.PartDocument:
			if p.Data != "" {
				n++
			} else {
				e.drop("document.url (OpenAI takes inline files only)")
			}
		case codec.PartToolResult:
			for j := range p.Content {
				if c := &p.Content[j]; c.Kind == codec.PartImage && (c.Data != "" || c.URL != "") {
					n++
				}
			}
		default:
			e.drop(p.Kind.String())
		}
	}
	if n == 0 {
		return
	}
	e.sep()
	e.b = append(e.b, `{"role":"user","content":`...)
	if n == 1 && texts == 1 {
		e.textContent(m.Parts, 1)
	} else {
		e.b = append(e.b, '[')
		for i := range m.Parts {
			p := &m.Parts[i]
			if p.Kind != codec.PartToolResult {
				e.userPart(p)
				continue
			}
			for j := range p.Content {
				if p.Content[j].Kind == codec.PartImage {
					e.userPart(&p.Content[j])
				}
			}
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

func (e *requestEncoder) userPart(p *codec.Part) {
	switch p.Kind {
	case codec.PartText:
		if p.Text != "" {
			e.textPart(p.Text)
		}
	case codec.PartImage:
		if p.Data == "" && p.URL == "" {
			return
		}
		e.sep()
		e.b = append(e.b, `{"type":"image_url","image_url":{"url":`...)
		if p.Data != "" {
			e.dataURL(p.MediaType, p.Data)
		} else {
			e.str(p.URL)
		}
		e.b = append(e.b, "}}"...)
	case codec.PartDocument:
		if p.Data == "" {
			return
		}
		if text, ok := documentText(p); ok {
			e.textPart(text)
			return
		}
		e.sep()
		e.b = append(e.b, `{"type":"file","file":{"filename":`...)
		e.str(filename(p))
		e.b = append(e.b, `,"file_data":`...)
		e.dataURL(p.MediaType, p.Data)
		e.b = append(e.b, "}}"...)
	}
}

// documentText returns the text of a text document (text/plain,
// text/markdown…): Chat Completions takes only PDF files, so a text
// document goes as a text part. ok is false for other documents, and for
// data that is not base64 (sent as a file, for the upstream to judge).
func documentText(p *codec.Part) (text string, ok bool) {
	if !strings.HasPrefix(p.MediaType, "text/") {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(p.Data)
	return string(b), err == nil
}

// filename names a document for OpenAI's file part, which wants one.
func filename(p *codec.Part) string {
	switch {
	case p.Title != "":
		return p.Title
	case p.MediaType == "application/pdf":
		return "document.pdf"
	}
	return "document"
}

// dataURL appends "data:<mediaType>;base64,<data>" as a JSON string.
func (e *requestEncoder) dataURL(mediaType, data string) {
	e.b = append(e.b, `"data:`...)
	e.b = rawjson.AppendEscaped(e.b, mediaType)
	e.b = append(e.b, ";base64,"...)
	e.b = rawjson.AppendEscaped(e.b, data)
	e.b = append(e.b, '"')
}

func (e *requestEncoder) toolMessage(p *codec.Part) {
	e.sep()
	e.b = append(e.b, `{"role":"tool","tool_call_id":`...)
	e.str(upstreamCallID(p.ID))
	e.b = append(e.b, `,"content":`...)
	e.textContent(p.Content, countText(p.Content))
	e.b = append(e.b, '}')
	if p.IsError {
		e.drop("tool_result.is_error")
	}
}

// upstreamCallID returns id, or a 40-character stand-in when id is longer
// than OpenAI accepts.
func upstreamCallID(id string) string {
	if len(id) <= maxCallID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:])[:maxCallID-len("call_")]
}

func (e *requestEncoder) assistant(m *codec.Message) {
	texts, calls := 0, 0
	for i := range m.Parts {
		switch p := &m.Parts[i]; p.Kind {
		case codec.PartText:
			if p.Text != "" {
				texts++
			}
		case codec.PartToolCall:
			calls++
		default:
			e.drop(p.Kind.String())
		}
	}
	if texts == 0 && calls == 0 {
		return // nothing left to say (thinking only): DecodeRequest skips such turns too
	}
	e.sep()
	e.b = append(e.b, `{"role":"assistant","content":`...)
	if texts == 0 {
		e.b = append(e.b, "null"...)
	} else {
		e.textContent(m.Parts, texts)
	}
	if calls > 0 {
		e.b = append(e.b, `,"tool_calls":[`...)
		for i := range m.Parts {
			if p := &m.Parts[i]; p.Kind == codec.PartToolCall {
				e.sep()
				e.b = append(e.b, `{"id":`...)
				e.str(upstreamCallID(p.ID))
				e.b = append(e.b, `,"type":"function","function":{"name":`...)
				e.str(p.Name)
				e.b = append(e.b, `,"arguments":`...)
				e.str(arguments(p.Arguments))
				e.b = append(e.b, "}}"...)
			}
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

func (e *requestEncoder) tools() *codec.Error {
	r := e.r
	if len(r.Tools) == 0 {
		return nil
	}
	e.key("tools")
	e.b = append(e.b, '[')
	for i := range r.Tools {
		t := &r.Tools[i]
		e.sep()
		e.b = append(e.b, `{"type":"function","function":{"name":`...)
		e.str(t.Name)
		if t.Description != "" {
			e.b = append(e.b, `,"description":`...)
			e.str(t.Description)
		}
		if t.Parameters != "" {
			if !sonic.ValidString(t.Parameters) {
				return invalid("tools["+strconv.Itoa(i)+"].parameters", "the parameters of tool '"+t.Name+"' are not valid JSON")
			}
			e.b = append(e.b, `,"parameters":`...)
			e.b = append(e.b, t.Parameters...)
		}
		if t.Strict {
			e.b = append(e.b, `,"strict":true`...)
		}
		e.b = append(e.b, "}}"...)
	}
	e.b = append(e.b, ']')
	switch c := &r.Choice; c.Mode {
	case codec.ToolNone:
		e.key("tool_choice")
		e.b = append(e.b, `"none"`...)
	case codec.ToolRequired:
		e.key("tool_choice")
		e.b = append(e.b, `"required"`...)
	case codec.ToolSpecific:
		e.key("tool_choice")
		e.b = append(e.b, `{"type":"function","function":{"name":`...)
		e.str(c.Name)
		e.b = append(e.b, "}}"...)
	}
	if r.Choice.DisableParallel {
		e.key("parallel_tool_calls")
		e.b = append(e.b, "false"...)
	}
	return nil
}

func (e *requestEncoder) settings() {
	r := e.r
	if r.MaxTokens > 0 {
		if e.reasoning {
			e.key("max_completion_tokens")
		} else {
			e.key("max_tokens")
		}
		e.b = strconv.AppendInt(e.b, int64(r.MaxTokens), 10)
	}
	e.float("temperature", r.Temperature)
	e.float("top_p", r.TopP)
	if r.TopK != nil {
		e.drop("top_k")
	}
	if len(r.Stop) > 0 {
		if e.reasoning {
			e.drop("stop (reasoning model)")
		} else {
			e.key("stop")
			e.b = append(e.b, '[')
			for _, s := range r.Stop {
				e.sep()
				e.str(s)
			}
			e.b = append(e.b, ']')
		}
	}
	if r.Seed != nil {
		e.key("seed")
		e.b = strconv.AppendInt(e.b, *r.Seed, 10)
	}
	if effort := effortFor(&r.Thinking); effort != "" {
		if e.reasoning {
			e.key("reasoning_effort")
			e.str(effort)
		} else if r.Thinking.Enabled {
			e.drop("reasoning_effort (not an OpenAI reasoning model)")
		}
	}
}

// float appends an optional number setting; reasoning models take only
// their defaults, so they get none.
func (e *requestEncoder) float(name string, v *float64) {
	switch {
	case v == nil:
	case e.reasoning:
		e.drop(name + " (reasoning model)")
	case math.IsNaN(*v) || math.IsInf(*v, 0):
		e.drop(name + " (not a finite number)")
	default:
		e.key(name)
		e.b = strconv.AppendFloat(e.b, *v, 'g', -1, 64)
	}
}

func (e *requestEncoder) format() *codec.Error {
	f := &e.r.Format
	switch f.Kind {
	case codec.FormatJSON:
		e.key("response_format")
		e.b = append(e.b, `{"type":"json_object"}`...)
	case codec.FormatJSONSchema:
		if !sonic.ValidString(f.Schema) {
			return invalid("response_format.json_schema.schema", "the response schema is not valid JSON")
		}
		name := f.Name
		if name == "" {
			name = "response" // OpenAI requires a name
		}
		e.key("response_format")
		e.b = append(e.b, `{"type":"json_schema","json_schema":{"name":`...)
		e.str(name)
		e.b = append(e.b, `,"schema":`...)
		e.b = append(e.b, f.Schema...)
		if f.Strict {
			e.b = append(e.b, `,"strict":true`...)
		}
		e.b = append(e.b, "}}"...)
	}
	return nil
}
