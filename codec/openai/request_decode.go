package openai

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/param"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Decoding a client's chat completion request into the canonical model.
// The choices where OpenAI and the canonical model differ are listed in
// README.md; the short version:
//
//   - system and developer messages, wherever they are, become Request.System
//     in order; consecutive tool messages become one user message of tool
//     results, each named after the call it answers;
//   - reasoning_content (DeepSeek, vLLM; "reasoning" too) and thinking_blocks
//     (LiteLLM: thinking with signature, redacted_thinking) of assistant
//     messages become thinking parts;
//   - input_audio parts, file_id files, custom tools and n > 1 are 400s:
//     another provider cannot honour them and dropping them would change
//     the answer;
//   - the legacy functions/function_call API is mapped to tools; legacy
//     function calls get the id "call_legacy_<message index>";
//   - fields with no canonical equivalent (logprobs, penalties, …) are
//     dropped and named in the dropped list.
//
// The decoded Request points into body.

// DecodeRequest decodes a client's chat completion request into r. A 400
// error names the offending field. Strings in r may point into body.
// DecodeRequest does not check for duplicate keys: the proxy's
// ChatRequest.Parse, which runs first, rejects a duplicate "model".
func DecodeRequest(body []byte, r *codec.Request) *codec.Error {
	_, err := DecodeRequestDropped(body, r, nil)
	return err
}

// DecodeRequestDropped is DecodeRequest that also appends to dropped the
// names of the request fields it had to ignore because the canonical model
// has no place for them (such as "logprobs" or "image_url.detail"), each
// name once, and returns the extended list.
func DecodeRequestDropped(body []byte, r *codec.Request, dropped []string) ([]string, *codec.Error) {
	return decodeRequest(body, r, dropped, false)
}

// decodeRequest is DecodeRequestDropped; checked says that ChatRequest.Parse
// has checked the strings of body (rawjson.ValidStrings), which sonic does
// not.
func decodeRequest(body []byte, r *codec.Request, dropped []string, checked bool) ([]string, *codec.Error) {
	return param.Decode(body, r, dropped, checked, &requestPool, decodeWire)
}

// decodeWire runs the steps of chat's decoding on d.
func decodeWire(d param.Decoder[*wireRequest]) ([]string, *codec.Error) {
	cd := requestDecoder{d}
	err := cd.decode()
	return cd.Dropped, err
}

// requestDecoder is one DecodeRequest: the state the styles share (its
// ToolMsg collects the results of consecutive tool messages), and chat's
// steps as its methods.
type requestDecoder struct{ param.Decoder[*wireRequest] }

var addDropped = param.AddDropped

func (d *requestDecoder) decode() *codec.Error {
	w, r := d.W, d.R
	if w.Model == "" {
		return invalid("model", "you must provide a model parameter")
	}
	r.Model = w.Model
	if len(w.Messages) == 0 {
		return invalid("messages", "'messages' must contain at least one message")
	}
	d.ToolMsg = -1
	for i := range w.Messages {
		if err := d.message(i, &w.Messages[i]); err != nil {
			return err
		}
	}
	if len(r.Messages) == 0 && len(r.System) == 0 {
		return invalid("messages", "The messages have no content.")
	}
	if err := d.tools(); err != nil {
		return err
	}
	if err := d.toolChoice(); err != nil {
		return err
	}
	if err := d.settings(); err != nil {
		return err
	}
	if err := d.format(); err != nil {
		return err
	}
	if err := d.reasoning(); err != nil {
		return err
	}
	d.droppedFields()
	return nil
}

func (d *requestDecoder) message(i int, m *wireMessage) *codec.Error {
	role := m.Role
	if role != "tool" && role != "function" {
		d.ToolMsg = -1
	}
	if m.Name != "" && role != "function" {
		d.Drop("messages.name")
	}
	switch role {
	case "system", "developer":
		return d.system(i, m)
	case "user":
		return d.user(i, m)
	case "assistant":
		return d.assistant(i, m)
	case "tool":
		return d.tool(i, m)
	case "function":
		return d.function(i, m)
	case "":
		return invalid(msgParam(i, "role"), "Missing required parameter: '"+msgParam(i, "role")+"'.")
	}
	return invalid(msgParam(i, "role"), "Invalid value: '"+role+"'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.")
}

func msgParam(i int, field string) string {
	return "messages[" + strconv.Itoa(i) + "]." + field
}

func partParam(i, j int) string {
	return "messages[" + strconv.Itoa(i) + "].content[" + strconv.Itoa(j) + "]"
}

func addMessage(r *codec.Request, role codec.Role) *codec.Message { return r.AddMessage(role) }

// system adds the text of a system or developer message to r.System.
func (d *requestDecoder) system(i int, m *wireMessage) *codec.Error {
	parts, err := d.textContent(i, m.Content, d.R.System)
	d.R.System = parts
	return err
}

// textContent appends the text of content (a string or an array of text
// parts) to parts.
func (d *requestDecoder) textContent(i int, content rawValue, parts []codec.Part) ([]codec.Part, *codec.Error) {
	switch rawjson.KindOf(content) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return parts, nil
	case rawjson.KindString:
		s, err := rawjson.Unquote(content)
		if err != nil {
			return parts, invalid(msgParam(i, "content"), "invalid string")
		}
		if s != "" {
			parts = append(parts, codec.Part{Kind: codec.PartText, Text: s})
		}
		return parts, nil
	case rawjson.KindArray:
		wp, err := d.contentParts(i, content)
		if err != nil {
			return parts, err
		}
		for j := range wp {
			p := &wp[j]
			if p.Type != "text" {
				return parts, invalid(partParam(i, j)+".type", "Invalid value: '"+p.Type+"'. Supported values are: 'text'.")
			}
			if p.Text != "" {
				parts = append(parts, codec.Part{Kind: codec.PartText, Text: p.Text, CacheControl: p.CacheControl.Type, CacheTTL: p.CacheControl.TTL})
			}
		}
		return parts, nil
	}
	return parts, invalid(msgParam(i, "content"), "'content' must be a string or an array of content parts")
}

// contentParts decodes a content array into the decoder's scratch slice,
// valid until the next call.
func (d *requestDecoder) contentParts(i int, content rawValue) ([]wirePart, *codec.Error) {
	ps := d.W.parts[:cap(d.W.parts)]
	clear(ps)
	d.W.parts = ps[:0]
	if err := unmarshalString(rawjson.UnsafeString(content), &d.W.parts); err != nil {
		return nil, invalid(msgParam(i, "content"), "'content' must be a string or an array of content parts")
	}
	return d.W.parts, nil
}

func (d *requestDecoder) user(i int, m *wireMessage) *codec.Error {
	switch rawjson.KindOf(m.Content) {
	case rawjson.KindNull, rawjson.KindInvalid:
		return nil
	case rawjson.KindString:
		s, err := rawjson.Unquote(m.Content)
		if err != nil {
			return invalid(msgParam(i, "content"), "invalid string")
		}
		if s != "" {
			msg := addMessage(d.R, codec.RoleUser)
			msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartText, Text: s})
		}
		return nil
	case rawjson.KindArray:
	default:
		return invalid(msgParam(i, "content"), "'content' must be a string or an array of content parts")
	}
	wp, err := d.contentParts(i, m.Content)
	if err != nil {
		return err
	}
	var msg *codec.Message
	for j := range wp {
		p, err := d.userPart(i, j, &wp[j])
		if err != nil {
			return err
		}
		if p.Kind == codec.PartText && p.Text == "" {
			continue
		}
		if msg == nil {
			msg = addMessage(d.R, codec.RoleUser)
		}
		msg.Parts = append(msg.Parts, p)
	}
	return nil
}

func (d *requestDecoder) userPart(i, j int, p *wirePart) (codec.Part, *codec.Error) {
	cp := codec.Part{CacheControl: p.CacheControl.Type, CacheTTL: p.CacheControl.TTL}
	switch p.Type {
	case "text":
		cp.Kind, cp.Text = codec.PartText, p.Text
		return cp, nil
	case "image_url":
		cp.Kind = codec.PartImage
		if p.ImageURL.Detail != "" {
			d.Drop("image_url.detail")
		}
		if param.ImageURL(p.ImageURL.URL, &cp) {
			return cp, nil
		}
		return cp, invalid(partParam(i, j)+".image_url.url", "Invalid image URL: expected a base64 data URL or an http(s) URL.")
	case "file":
		return d.filePart(i, j, p, cp)
	case "input_audio":
		return cp, invalid(partParam(i, j), "Audio input cannot be translated for the provider that serves this model.")
	case "":
		return cp, invalid(partParam(i, j)+".type", "Missing required parameter: '"+partParam(i, j)+".type'.")
	}
	return cp, invalid(partParam(i, j)+".type", "Invalid value: '"+p.Type+"'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.")
}

// filePart maps an inline file (a PDF, as OpenAI accepts it) to a document.
func (d *requestDecoder) filePart(i, j int, p *wirePart, cp codec.Part) (codec.Part, *codec.Error) {
	f := &p.File
	if f.FileID != "" && f.FileData == "" {
		return cp, invalid(partParam(i, j)+".file.file_id", "Uploaded files (file_id) cannot be used with the provider that serves this model; send the file inline as file_data.")
	}
	if f.FileData == "" {
		return cp, invalid(partParam(i, j)+".file", "Missing required parameter: '"+partParam(i, j)+".file.file_data'.")
	}
	cp.Kind, cp.Title = codec.PartDocument, f.Filename
	if mt, data, ok := rawjson.ParseDataURL(f.FileData); ok {
		cp.MediaType, cp.Data = mt, data
	} else {
		// Plain base64: chat completions take PDFs only.
		cp.MediaType, cp.Data = "application/pdf", f.FileData
	}
	return cp, nil
}

func (d *requestDecoder) assistant(i int, m *wireMessage) *codec.Error {
	msg := addMessage(d.R, codec.RoleAssistant)
	d.thinking(m, msg)
	switch rawjson.KindOf(m.Content) {
	case rawjson.KindString, rawjson.KindNull, rawjson.KindInvalid:
		parts, err := d.textContent(i, m.Content, msg.Parts)
		if err != nil {
			return err
		}
		msg.Parts = parts
	case rawjson.KindArray:
		wp, err := d.contentParts(i, m.Content)
		if err != nil {
			return err
		}
		for j := range wp {
			p := &wp[j]
			text := p.Text
			switch p.Type {
			case "text":
			case "refusal":
				text = p.Refusal
			default:
				return invalid(partParam(i, j)+".type", "Invalid value: '"+p.Type+"'. Supported values are: 'text' and 'refusal'.")
			}
			if text != "" {
				msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartText, Text: text, CacheControl: p.CacheControl.Type, CacheTTL: p.CacheControl.TTL})
			}
		}
	default:
		return invalid(msgParam(i, "content"), "'content' must be a string or an array of content parts")
	}
	if m.Refusal != "" {
		msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartText, Text: m.Refusal})
	}
	for j := range m.ToolCalls {
		tc := &m.ToolCalls[j]
		if tc.Type != "function" && tc.Type != "" {
			return invalid(msgParam(i, "tool_calls["+strconv.Itoa(j)+"].type"), "Only function tool calls can be translated for the provider that serves this model.")
		}
		msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartToolCall, ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	if fc := &m.FunctionCall; fc.Name != "" {
		msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartToolCall, ID: legacyCallID(i), Name: fc.Name, Arguments: arguments(fc.Arguments)})
	}
	if len(msg.Parts) == 0 {
		d.R.Messages = d.R.Messages[:len(d.R.Messages)-1] // an empty turn
	}
	return nil
}

// thinking adds the reasoning of an assistant message to msg: the
// thinking_blocks when there are any (they carry signatures), else
// reasoning_content. A client that streamed the answer knows the thinking
// text from the reasoning_content deltas and the signature from the
// thinking_blocks delta (see stream_encode.go), so thinking blocks with
// no text take it from reasoning_content.
func (d *requestDecoder) thinking(m *wireMessage, msg *codec.Message) {
	text := m.ReasoningContent
	if text == "" {
		text = m.Reasoning
	}
	if len(m.ThinkingBlocks) == 0 {
		if text != "" {
			msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartThinking, Text: text})
		}
		return
	}
	first, hasText := -1, false
	for j := range m.ThinkingBlocks {
		b := &m.ThinkingBlocks[j]
		switch b.Type {
		case "thinking":
			if b.Thinking == "" && b.Signature == "" {
				continue // carries nothing
			}
			if first < 0 {
				first = len(msg.Parts)
			}
			hasText = hasText || b.Thinking != ""
			p := codec.Part{Kind: codec.PartThinking, Text: b.Thinking}
			if b.Signature != "" {
				p.Signature, p.SigOrigin = codec.SplitSignature(b.Signature, codec.DialectOpenAI)
			}
			msg.Parts = append(msg.Parts, p)
		case "redacted_thinking":
			msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartRedactedThinking, Data: b.Data})
		default:
			d.Drop("thinking_blocks.type")
		}
	}
	if first >= 0 && !hasText {
		msg.Parts[first].Text = text
	}
}

// isEmptyValue reports whether a raw member is absent or null.
func isEmptyValue(v rawValue) bool { return param.Absent(v) }

// arguments returns a tool call's arguments, "{}" for none.
var arguments = param.Arguments

func legacyCallID(i int) string { return "call_legacy_" + strconv.Itoa(i) }

func (d *requestDecoder) tool(i int, m *wireMessage) *codec.Error {
	if m.ToolCallID == "" {
		return invalid(msgParam(i, "tool_call_id"), "Missing required parameter: '"+msgParam(i, "tool_call_id")+"'.")
	}
	return d.toolResult(i, m, m.ToolCallID, d.callName(m.ToolCallID))
}

// function maps a legacy function-role message to the result of the most
// recent call of that function.
func (d *requestDecoder) function(i int, m *wireMessage) *codec.Error {
	if m.Name == "" {
		return invalid(msgParam(i, "name"), "Missing required parameter: '"+msgParam(i, "name")+"'.")
	}
	id := d.callID(m.Name)
	if id == "" {
		id = legacyCallID(i)
	}
	return d.toolResult(i, m, id, m.Name)
}

func (d *requestDecoder) toolResult(i int, m *wireMessage, id, name string) *codec.Error {
	content, err := d.textContent(i, m.Content, nil)
	if err != nil {
		return err
	}
	d.AddToolResult(id, name, content)
	return nil
}

// callName returns the name of the tool call with the given id in the
// history so far, searching from the end.
func (d *requestDecoder) callName(id string) string { return d.R.CallName(id) }

// callID returns the id of the latest call of the named tool.
func (d *requestDecoder) callID(name string) string {
	for i := len(d.R.Messages) - 1; i >= 0; i-- {
		m := &d.R.Messages[i]
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if p := &m.Parts[j]; p.Kind == codec.PartToolCall && p.Name == name {
				return p.ID
			}
		}
	}
	return ""
}

func (d *requestDecoder) tools() *codec.Error {
	w, r := d.W, d.R
	for i := range w.Tools {
		t := &w.Tools[i]
		if t.Type != "function" {
			return invalid("tools["+strconv.Itoa(i)+"].type", "Only function tools can be translated for the provider that serves this model.")
		}
		tool, err := functionTool("tools", i, ".function", &t.Function)
		if err != nil {
			return err
		}
		tool.CacheControl = t.CacheControl.Type
		r.Tools = append(r.Tools, tool)
	}
	for i := range w.Functions {
		tool, err := functionTool("functions", i, "", &w.Functions[i])
		if err != nil {
			return err
		}
		r.Tools = append(r.Tools, tool)
	}
	return nil
}

// functionTool reads the function definition list[i]<field>; the name of
// the parameter is built only for an error.
func functionTool(list string, i int, field string, f *wireFunction) (codec.Tool, *codec.Error) {
	pf := param.Function{Name: f.Name, Description: f.Description, Parameters: f.Parameters, Strict: f.Strict}
	return pf.Tool(func() string { return list + "[" + strconv.Itoa(i) + "]" + field })
}

func (d *requestDecoder) toolChoice() *codec.Error {
	w, c := d.W, &d.R.Choice
	parallel, err := rawBoolOr(w.ParallelToolCalls, "parallel_tool_calls", true)
	if err != nil {
		return err
	}
	c.DisableParallel = !parallel
	v, param, legacy := w.ToolChoice, "tool_choice", false
	if isEmptyValue(v) {
		v, param, legacy = w.FunctionCall, "function_call", true
	}
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil
	case rawjson.KindString:
		s, _ := rawjson.Unquote(v)
		switch {
		case s == "auto":
			c.Mode = codec.ToolAuto
		case s == "none":
			c.Mode = codec.ToolNone
		case s == "required" && !legacy:
			c.Mode = codec.ToolRequired
		default:
			return invalid(param, "Invalid value: '"+s+"'. Supported values are: 'none', 'auto' and 'required'.")
		}
		return nil
	case rawjson.KindObject:
	default:
		return invalid(param, "'"+param+"' must be a string or an object")
	}
	var tc wireToolChoice
	if unmarshalString(rawjson.UnsafeString(v), &tc) != nil {
		return invalid(param, "'"+param+"' is not a valid tool choice")
	}
	switch {
	case legacy && tc.Name != "":
		c.Mode, c.Name = codec.ToolSpecific, tc.Name
	case tc.Type == "function" && tc.Function.Name != "":
		c.Mode, c.Name = codec.ToolSpecific, tc.Function.Name
	case tc.Type == "allowed_tools" && (tc.AllowedTools.Mode == "auto" || tc.AllowedTools.Mode == "required"):
		// The mode survives; the restriction to a subset of the tools does not.
		c.Mode = codec.ToolAuto
		if tc.AllowedTools.Mode == "required" {
			c.Mode = codec.ToolRequired
		}
		d.Drop("tool_choice.allowed_tools")
	default:
		return invalid(param, "'"+param+"' must name a function: {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	return nil
}

func (d *requestDecoder) settings() *codec.Error {
	w, r := d.W, d.R
	maxTokens, name := w.MaxCompletionTokens, "max_completion_tokens"
	if isEmptyValue(maxTokens) {
		maxTokens, name = w.MaxTokens, "max_tokens"
	}
	var (
		n   int64
		ok  bool
		err *codec.Error
	)
	if r.MaxTokens, err = param.MaxTokens(maxTokens, name); err != nil {
		return err
	}
	if r.Temperature, err = rawFloat(w.Temperature, "temperature"); err != nil {
		return err
	}
	if r.TopP, err = rawFloat(w.TopP, "top_p"); err != nil {
		return err
	}
	if n, ok, err = rawInt(w.TopK, "top_k"); err != nil {
		return err
	} else if ok {
		k := int(n)
		r.TopK = &k
	}
	if n, ok, err = rawInt(w.Seed, "seed"); err != nil {
		return err
	} else if ok {
		seed := n
		r.Seed = &seed
	}
	if n, ok, err = rawInt(w.N, "n"); err != nil {
		return err
	} else if ok && n != 1 {
		return invalid("n", "'n' must be 1: the provider that serves this model returns one choice per request.")
	}
	if err = d.stop(); err != nil {
		return err
	}
	r.User = w.User
	if r.User == "" {
		r.User = w.SafetyIdentifier
	}
	if r.Stream, err = rawBool(w.Stream, "stream"); err != nil {
		return err
	}
	r.IncludeUsage, err = rawBool(w.StreamOptions.IncludeUsage, "stream_options.include_usage")
	return err
}

func (d *requestDecoder) stop() *codec.Error {
	v := d.W.Stop
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
	case rawjson.KindString:
		s, _ := rawjson.Unquote(v)
		d.R.Stop = append(d.R.Stop, s)
	case rawjson.KindArray:
		if unmarshalString(rawjson.UnsafeString(v), &d.R.Stop) != nil {
			return invalid("stop", "'stop' must be a string or an array of strings")
		}
	default:
		return invalid("stop", "'stop' must be a string or an array of strings")
	}
	return nil
}

func (d *requestDecoder) format() *codec.Error {
	f, rf := &d.W.ResponseFormat, &d.R.Format
	switch f.Type {
	case "", "text":
	case "json_object":
		rf.Kind = codec.FormatJSON
	case "json_schema":
		s := &f.JSONSchema
		if err := param.SchemaFormat(s.Name, s.Schema, s.Strict, "response_format.json_schema.", rf); err != nil {
			return err
		}
		if s.Description != "" {
			d.Drop("response_format.json_schema.description")
		}
	default:
		return invalid("response_format.type", "Invalid value: '"+f.Type+"'. Supported values are: 'text', 'json_object' and 'json_schema'.")
	}
	return nil
}

// reasoning reads reasoning_effort, and the Anthropic-style "thinking"
// object that LiteLLM accepts on this API.
func (d *requestDecoder) reasoning() *codec.Error {
	th := &d.R.Thinking
	if err := param.Effort(d.W.ReasoningEffort, "reasoning_effort", th); err != nil {
		return err
	}
	t := &d.W.Thinking
	switch t.Type {
	case "", "disabled":
	case "enabled":
		n, _, err := rawInt(t.BudgetTokens, "thinking.budget_tokens")
		if err != nil {
			return err
		}
		th.Enabled, th.Budget = true, int(n)
	default:
		return invalid("thinking.type", "Invalid value: '"+t.Type+"'. Supported values are: 'enabled' and 'disabled'.")
	}
	return nil
}

// droppedFields names the request fields the canonical model cannot carry.
func (d *requestDecoder) droppedFields() {
	w := d.W
	d.DropPresent(
		param.Member{Name: "metadata", Value: w.Metadata}, param.Member{Name: "logprobs", Value: w.Logprobs},
		param.Member{Name: "top_logprobs", Value: w.TopLogprobs}, param.Member{Name: "logit_bias", Value: w.LogitBias},
		param.Member{Name: "presence_penalty", Value: w.PresencePenalty},
		param.Member{Name: "frequency_penalty", Value: w.FrequencyPenalty},
		param.Member{Name: "modalities", Value: w.Modalities}, param.Member{Name: "audio", Value: w.Audio},
		param.Member{Name: "prediction", Value: w.Prediction}, param.Member{Name: "service_tier", Value: w.ServiceTier},
		param.Member{Name: "store", Value: w.Store}, param.Member{Name: "verbosity", Value: w.Verbosity},
		param.Member{Name: "web_search_options", Value: w.WebSearchOptions},
		param.Member{Name: "prompt_cache_key", Value: w.PromptCacheKey},
		param.Member{Name: "prompt_cache_retention", Value: w.PromptCacheRetention})
}

// The raw scalar readers, shared with the Responses decoder.
var (
	rawInt    = param.Int
	rawFloat  = param.Float
	rawBool   = param.Bool
	rawBoolOr = param.BoolOr
)
