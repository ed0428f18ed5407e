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
	r.Reset()
	w := requestPool.Get().(*wireRequest)
	defer putRequest(w)
	if err := unmarshal(body, w, checked); err != nil {
		return dropped, bodyError(body)
	}
	d := requestDecoder{w: w, r: r, dropped: dropped}
	err := d.decode()
	return d.dropped, err
}

func putRequest(w *wireRequest) {
	w.reset()
	requestPool.Put(w)
}

func bodyError(body []byte) *codec.Error {
	if sonic.Valid(body) && rawjson.ValidStrings(body) {
		return invalid("", "A member of the request body has the wrong JSON type.")
	}
	return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
}

// requestDecoder carries the state of one DecodeRequest.
type requestDecoder struct {
	w       *wireRequest
	r       *codec.Request
	dropped []string
	// toolMsg is the index in r.Messages of the message that collects the
	// results of consecutive tool messages, or -1.
	toolMsg int
}

func (d *requestDecoder) drop(name string) { d.dropped = addDropped(d.dropped, name) }

// addDropped appends name to list unless it is there already.
func addDropped(list []string, name string) []string {
	for _, s := range list {
		if s == name {
			return list
		}
	}
	return append(list, name)
}

func (d *requestDecoder) decode() *codec.Error {
	w, r := d.w, d.r
	if w.Model == "" {
		return invalid("model", "you must provide a model parameter")
	}
	r.Model = w.Model
	if len(w.Messages) == 0 {
		return invalid("messages", "'messages' must contain at least one message")
	}
	d.toolMsg = -1
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
		d.toolMsg = -1
	}
	if m.Name != "" && role != "function" {
		d.drop("messages.name")
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

// addMessage appends a message of the given role to r, reusing the part
// slice a reset Request kept in that slot.
func addMessage(r *codec.Request, role codec.Role) *codec.Message {
	n := len(r.Messages)
	if n < cap(r.Messages) {
		r.Messages = r.Messages[:n+1]
		m := &r.Messages[n]
		m.Role, m.Parts = role, m.Parts[:0]
		return m
	}
	r.Messages = append(r.Messages, codec.Message{Role: role})
	return &r.Messages[n]
}

// system adds the text of a system or developer message to r.System.
func (d *requestDecoder) system(i int, m *wireMessage) *codec.Error {
	parts, err := d.textContent(i, m.Content, d.r.System)
	d.r.System = parts
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
	ps := d.w.parts[:cap(d.w.parts)]
	clear(ps)
	d.w.parts = ps[:0]
	if err := unmarshalString(rawjson.UnsafeString(content), &d.w.parts); err != nil {
		return nil, invalid(msgParam(i, "content"), "'content' must be a string or an array of content parts")
	}
	return d.w.parts, nil
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
			msg := addMessage(d.r, codec.RoleUser)
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
			msg = addMessage(d.r, codec.RoleUser)
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
			d.drop("image_url.detail")
		}
		u := p.ImageURL.URL
		if mt, data, ok := rawjson.ParseDataURL(u); ok && data != "" {
			cp.MediaType, cp.Data = mt, data
			return cp, nil
		}
		if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
			cp.URL = u
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
	msg := addMessage(d.r, codec.RoleAssistant)
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
		d.r.Messages = d.r.Messages[:len(d.r.Messages)-1] // an empty turn
	}
	return nil
}

// thinking adds the reasoning of an assistant message to msg: the
// thinking_blocks when there are any (they carry signatures), else
// reasoning_content. A client that streamed the answer knows the thinking
// text from the reasoning_content deltas and the signature from the
// thinking_blocks delta (see translate_stream.go), so thinking blocks with
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
			d.drop("thinking_blocks.type")
		}
	}
	if first >= 0 && !hasText {
		msg.Parts[first].Text = text
	}
}

// isEmptyValue reports whether a raw member is absent or null.
func isEmptyValue(v rawValue) bool {
	k := rawjson.KindOf(v)
	return k == rawjson.KindInvalid || k == rawjson.KindNull
}

// arguments returns a tool call's arguments, "{}" for none.
func arguments(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

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
	var msg *codec.Message
	if d.toolMsg >= 0 {
		msg = &d.r.Messages[d.toolMsg]
	} else {
		msg = addMessage(d.r, codec.RoleUser)
		d.toolMsg = len(d.r.Messages) - 1
	}
	msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartToolResult, ID: id, Name: name, Content: content})
	return nil
}

// callName returns the name of the tool call with the given id in the
// history so far, searching from the end.
func (d *requestDecoder) callName(id string) string {
	for i := len(d.r.Messages) - 1; i >= 0; i-- {
		m := &d.r.Messages[i]
		if m.Role != codec.RoleAssistant {
			continue
		}
		for j := range m.Parts {
			if p := &m.Parts[j]; p.Kind == codec.PartToolCall && p.ID == id {
				return p.Name
			}
		}
	}
	return ""
}

// callID returns the id of the latest call of the named tool.
func (d *requestDecoder) callID(name string) string {
	for i := len(d.r.Messages) - 1; i >= 0; i-- {
		m := &d.r.Messages[i]
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if p := &m.Parts[j]; p.Kind == codec.PartToolCall && p.Name == name {
				return p.ID
			}
		}
	}
	return ""
}

func (d *requestDecoder) tools() *codec.Error {
	w, r := d.w, d.r
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
	param := func(member string) string { return list + "[" + strconv.Itoa(i) + "]" + field + "." + member }
	if f.Name == "" {
		return codec.Tool{}, invalid(param("name"), "Missing required parameter: '"+param("name")+"'.")
	}
	strict, err := rawBool(f.Strict, "")
	if err != nil {
		return codec.Tool{}, invalid(param("strict"), "'strict' must be a boolean")
	}
	t := codec.Tool{Name: f.Name, Description: f.Description, Strict: strict}
	switch rawjson.KindOf(f.Parameters) {
	case rawjson.KindInvalid, rawjson.KindNull:
	case rawjson.KindObject:
		t.Parameters = rawjson.UnsafeString(f.Parameters)
	default:
		return t, invalid(param("parameters"), "'parameters' must be an object")
	}
	return t, nil
}

func (d *requestDecoder) toolChoice() *codec.Error {
	w, c := d.w, &d.r.Choice
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
		d.drop("tool_choice.allowed_tools")
	default:
		return invalid(param, "'"+param+"' must name a function: {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	return nil
}

func (d *requestDecoder) settings() *codec.Error {
	w, r := d.w, d.r
	maxTokens, param := w.MaxCompletionTokens, "max_completion_tokens"
	if isEmptyValue(maxTokens) {
		maxTokens, param = w.MaxTokens, "max_tokens"
	}
	n, ok, err := rawInt(maxTokens, param)
	if err != nil {
		return err
	}
	if ok {
		if n < 1 {
			return invalid(param, "Invalid '"+param+"': integer below minimum value. Expected a value >= 1.")
		}
		r.MaxTokens = int(n)
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
	v := d.w.Stop
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
	case rawjson.KindString:
		s, _ := rawjson.Unquote(v)
		d.r.Stop = append(d.r.Stop, s)
	case rawjson.KindArray:
		if unmarshalString(rawjson.UnsafeString(v), &d.r.Stop) != nil {
			return invalid("stop", "'stop' must be a string or an array of strings")
		}
	default:
		return invalid("stop", "'stop' must be a string or an array of strings")
	}
	return nil
}

func (d *requestDecoder) format() *codec.Error {
	f, rf := &d.w.ResponseFormat, &d.r.Format
	switch f.Type {
	case "", "text":
	case "json_object":
		rf.Kind = codec.FormatJSON
	case "json_schema":
		s := &f.JSONSchema
		if rawjson.KindOf(s.Schema) != rawjson.KindObject {
			return invalid("response_format.json_schema.schema", "'response_format.json_schema.schema' must be an object")
		}
		strict, err := rawBool(s.Strict, "response_format.json_schema.strict")
		if err != nil {
			return err
		}
		rf.Kind, rf.Name, rf.Schema, rf.Strict = codec.FormatJSONSchema, s.Name, rawjson.UnsafeString(s.Schema), strict
		if s.Description != "" {
			d.drop("response_format.json_schema.description")
		}
	default:
		return invalid("response_format.type", "Invalid value: '"+f.Type+"'. Supported values are: 'text', 'json_object' and 'json_schema'.")
	}
	return nil
}

// reasoning reads reasoning_effort, and the Anthropic-style "thinking"
// object that LiteLLM accepts on this API.
func (d *requestDecoder) reasoning() *codec.Error {
	th := &d.r.Thinking
	switch e := d.w.ReasoningEffort; e {
	case "":
	case "none":
		th.Effort = e
	case "minimal", "low", "medium", "high", "xhigh", "max":
		th.Enabled, th.Effort = true, e
	default:
		return invalid("reasoning_effort", "Invalid value: '"+e+"'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'.")
	}
	t := &d.w.Thinking
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
	w := d.w
	for _, f := range [...]struct {
		name string
		v    rawValue
	}{
		{"metadata", w.Metadata}, {"logprobs", w.Logprobs}, {"top_logprobs", w.TopLogprobs},
		{"logit_bias", w.LogitBias}, {"presence_penalty", w.PresencePenalty},
		{"frequency_penalty", w.FrequencyPenalty}, {"modalities", w.Modalities}, {"audio", w.Audio},
		{"prediction", w.Prediction}, {"service_tier", w.ServiceTier}, {"store", w.Store},
		{"verbosity", w.Verbosity}, {"web_search_options", w.WebSearchOptions},
		{"prompt_cache_key", w.PromptCacheKey}, {"prompt_cache_retention", w.PromptCacheRetention},
	} {
		if k := rawjson.KindOf(f.v); k != rawjson.KindInvalid && k != rawjson.KindNull {
			d.drop(f.name)
		}
	}
}

// rawInt reads an optional integer member; ok reports whether it is there.
func rawInt(v rawValue, param string) (n int64, ok bool, err *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return 0, false, nil
	case rawjson.KindNumber:
		if n, e := strconv.ParseInt(rawjson.UnsafeString(v), 10, 64); e == nil {
			return n, true, nil
		}
		// 512.0 is an integer too.
		if f, e := strconv.ParseFloat(rawjson.UnsafeString(v), 64); e == nil && f == float64(int64(f)) {
			return int64(f), true, nil
		}
	}
	return 0, false, invalid(param, "'"+param+"' must be an integer")
}

// rawFloat reads an optional number member.
func rawFloat(v rawValue, param string) (*float64, *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil, nil
	case rawjson.KindNumber:
		if f, e := strconv.ParseFloat(rawjson.UnsafeString(v), 64); e == nil {
			return &f, nil
		}
	}
	return nil, invalid(param, "'"+param+"' must be a number")
}

// rawBool reads an optional boolean member, false when absent.
func rawBool(v rawValue, param string) (bool, *codec.Error) { return rawBoolOr(v, param, false) }

func rawBoolOr(v rawValue, param string, def bool) (bool, *codec.Error) {
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return def, nil
	case rawjson.KindTrue:
		return true, nil
	case rawjson.KindFalse:
		return false, nil
	}
	return def, invalid(param, "'"+param+"' must be a boolean")
}

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
