package responses

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/param"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Decoding a client's Responses request into the canonical model (the
// mapping is in README.md):
//
//   - input, a string or items; instructions and system or developer
//     messages become Request.System, in order;
//   - consecutive assistant-side items (reasoning, assistant messages,
//     function calls) make one assistant turn, consecutive function call
//     outputs one user turn of tool results;
//   - a reasoning item is a thinking part: its summary text, its
//     encrypted_content the signature (tagged by the gateway with the
//     style that minted it, codec.TagSignature);
//   - built-in tools, other item types, stored prompts, conversations
//     and background mode are 400s: another provider cannot run them;
//   - previous_response_id, store, metadata and the input as sent go to
//     Request.Session for the proxy.

// DecodeRequest decodes a client's Responses request into r. A 400 error
// names the offending field. Strings in r may point into body.
func DecodeRequest(body []byte, r *codec.Request) *codec.Error {
	_, err := DecodeRequestDropped(body, r, nil)
	return err
}

// DecodeRequestDropped is DecodeRequest that also appends to dropped the
// names of the request fields it had to ignore, each once.
func DecodeRequestDropped(body []byte, r *codec.Request, dropped []string) ([]string, *codec.Error) {
	return param.DecodeWith(body, r, dropped, &requestPool, (*wireRequest).read, decodeWire)
}

// decodeWire runs the steps of a Responses request's decoding on d.
func decodeWire(d param.Decoder[*wireRequest]) ([]string, *codec.Error) {
	rd := requestDecoder{d}
	err := rd.decode()
	return rd.Dropped, err
}

// requestDecoder is one DecodeRequest: the state the styles share (its
// ToolMsg collects consecutive function call outputs), and the Responses
// steps as its methods.
type requestDecoder struct{ param.Decoder[*wireRequest] }

func (d *requestDecoder) decode() *codec.Error {
	w, r := d.W, d.R
	if w.Model == "" {
		return param.Invalid("model", "Missing required parameter: 'model'.")
	}
	r.Model = w.Model
	for _, step := range [...]func() *codec.Error{d.refused, d.instructions, d.input, d.tools, d.toolChoice, d.settings, d.format, d.reasoning, d.session} {
		if err := step(); err != nil {
			return err
		}
	}
	if len(r.Messages) == 0 && len(r.System) == 0 {
		return param.Invalid("input", "The input has no content.")
	}
	d.droppedFields()
	return nil
}

// refused rejects what only OpenAI's own state can serve.
func (d *requestDecoder) refused() *codec.Error {
	w := d.W
	switch {
	case !param.Absent(w.Conversation):
		return param.Invalid("conversation", "Conversations cannot be used with the provider that serves this model; continue with previous_response_id.")
	case !param.Absent(w.Prompt):
		return param.Invalid("prompt", "Stored prompt templates cannot be used with the provider that serves this model; send instructions and input.")
	}
	if bg, err := param.Bool(w.Background, "background"); err != nil || bg {
		if err == nil {
			err = param.Invalid("background", "Background responses cannot be made with the provider that serves this model.")
		}
		return err
	}
	return nil
}

func (d *requestDecoder) instructions() *codec.Error {
	v := d.W.Instructions
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil
	case rawjson.KindString:
		s, err := rawjson.Unquote(v)
		if err != nil {
			return param.Invalid("instructions", "invalid string")
		}
		d.R.Session.Instructions = s
		if s != "" {
			d.R.System = append(d.R.System, codec.Part{Kind: codec.PartText, Text: s})
		}
		return nil
	}
	return param.Invalid("instructions", "'instructions' must be a string")
}

// input reads input: a string is one user message, an array its items.
func (d *requestDecoder) input() *codec.Error {
	v := d.W.Input
	d.R.Session.Input = rawjson.UnsafeString(v)
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil // instructions alone, or the stored conversation
	case rawjson.KindString:
		if s := unquote(v); s != "" {
			msg := d.R.AddMessage(codec.RoleUser)
			msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartText, Text: s})
		}
		return nil
	case rawjson.KindArray:
	default:
		return param.Invalid("input", "'input' must be a string or an array of input items")
	}
	if d.W.inputBad.found {
		return d.W.inputBad.err()
	}
	for i := range d.W.items {
		if err := d.item(i, &d.W.items[i]); err != nil {
			return err
		}
	}
	return nil
}

func itemParam(i int, field string) string {
	return "input[" + strconv.Itoa(i) + "]." + field
}

func (d *requestDecoder) item(i int, it *wireItem) *codec.Error {
	if it.Type != "function_call_output" {
		d.ToolMsg = -1
	}
	switch it.Type {
	case "message":
		return d.message(i, it)
	case "":
		if it.Role == "" {
			return param.Invalid(itemParam(i, "type"), "Missing required parameter: '"+itemParam(i, "type")+"'.")
		}
		return d.message(i, it)
	case "function_call":
		return d.call(i, it)
	case "function_call_output":
		return d.callOutput(i, it)
	case "reasoning":
		d.reasoningItem(i, it)
		return nil
	case "item_reference":
		return param.Invalid(itemParam(i, "type"), "Item references cannot be resolved for the provider that serves this model; send the items themselves, or previous_response_id.")
	}
	return param.Invalid(itemParam(i, "type"), "Input items of type '"+it.Type+"' cannot be translated for the provider that serves this model.")
}

// assistantTurn is the assistant message that the assistant-side items
// since the last user-side one make.
func (d *requestDecoder) assistantTurn() *codec.Message {
	if n := len(d.R.Messages); n > 0 && d.R.Messages[n-1].Role == codec.RoleAssistant {
		return &d.R.Messages[n-1]
	}
	return d.R.AddMessage(codec.RoleAssistant)
}

func (d *requestDecoder) message(i int, it *wireItem) *codec.Error {
	switch it.Role {
	case "user":
		return d.content(i, it.Content, codec.RoleUser)
	case "assistant":
		return d.content(i, it.Content, codec.RoleAssistant)
	case "system", "developer":
		parts, err := d.textContent(i, it.Content, d.R.System)
		d.R.System = parts
		return err
	case "":
		return param.Invalid(itemParam(i, "role"), "Missing required parameter: '"+itemParam(i, "role")+"'.")
	}
	return param.Invalid(itemParam(i, "role"), "Invalid value: '"+it.Role+"'. Supported values are: 'user', 'assistant', 'system', and 'developer'.")
}

// contentParts reads a content array into the decoder's scratch slice,
// valid until the next call; ok is false when it is not one.
func (d *requestDecoder) contentParts(content rawValue) (_ []wirePart, ok bool) {
	return scratchArray(content, &d.W.parts)
}

// scratchArray reads the array of objects v, a checked span of the body
// (a content array), into the scratch slice s, emptied first; ok is false
// when v is not such an array.
func scratchArray[T any](v rawValue, s *[]T) (_ []T, ok bool) {
	*s = emptied(*s)
	var bad mismatch
	end := readObjects(v, (*list[T])(s), contentDepth, "", &bad)
	return *s, end >= 0 && !bad.found
}

// errContent is the 400 of a message whose content is neither a string
// nor parts.
func errContent(i int) *codec.Error {
	return param.Invalid(itemParam(i, "content"), "'content' must be a string or an array of content parts")
}

// textContent appends the text of a system or developer message (a
// string, or input_text parts) to parts.
func (d *requestDecoder) textContent(i int, content rawValue, parts []codec.Part) ([]codec.Part, *codec.Error) {
	if rawjson.KindOf(content) == rawjson.KindString {
		return appendText(parts, content, i, "content")
	}
	wp, ok := d.contentParts(content)
	if !ok {
		return parts, errContent(i)
	}
	for j := range wp {
		if wp[j].Type != "input_text" {
			return parts, param.Invalid(partParam(i, j)+".type", "Invalid value: '"+wp[j].Type+"'. Supported values are: 'input_text'.")
		}
		if wp[j].Text != "" {
			parts = append(parts, codec.Part{Kind: codec.PartText, Text: wp[j].Text})
		}
	}
	return parts, nil
}

// appendText appends the JSON string v, member field of input item i, as
// a text part, unless empty.
func appendText(parts []codec.Part, v rawValue, i int, field string) ([]codec.Part, *codec.Error) {
	s, err := rawjson.Unquote(v)
	if err != nil {
		return parts, param.Invalid(itemParam(i, field), "invalid string")
	}
	if s != "" {
		parts = append(parts, codec.Part{Kind: codec.PartText, Text: s})
	}
	return parts, nil
}

func partParam(i, j int) string {
	return "input[" + strconv.Itoa(i) + "].content[" + strconv.Itoa(j) + "]"
}

// content reads a user or assistant message: a string, or parts. A turn
// left empty is no turn.
func (d *requestDecoder) content(i int, content rawValue, role codec.Role) *codec.Error {
	msg := d.turn(role)
	defer func() {
		if n := len(d.R.Messages); len(d.R.Messages[n-1].Parts) == 0 {
			d.R.Messages = d.R.Messages[:n-1]
		}
	}()
	switch rawjson.KindOf(content) {
	case rawjson.KindString:
		parts, err := appendText(msg.Parts, content, i, "content")
		msg.Parts = parts
		return err
	case rawjson.KindArray:
	default:
		return errContent(i)
	}
	wp, ok := d.contentParts(content)
	if !ok {
		return errContent(i)
	}
	for j := range wp {
		p, err := d.part(&wp[j], role)
		if err != nil {
			return located(err, partParam(i, j))
		}
		if p.Kind != codec.PartText || p.Text != "" {
			msg.Parts = append(msg.Parts, p)
		}
	}
	return nil
}

// turn is the message a user or assistant message item adds to: a new
// user message, or the assistant turn under way.
func (d *requestDecoder) turn(role codec.Role) *codec.Message {
	if role == codec.RoleAssistant {
		return d.assistantTurn()
	}
	return d.R.AddMessage(codec.RoleUser)
}

// part reads one content part of a user or assistant message (an
// assistant's are its output text and refusals), or of a function call
// output. An error names the member within the part (see located).
func (d *requestDecoder) part(p *wirePart, role codec.Role) (codec.Part, *codec.Error) {
	const name = ""
	switch {
	case p.Type == "input_text" || role == codec.RoleAssistant && p.Type == "output_text":
		return codec.Part{Kind: codec.PartText, Text: p.Text}, nil
	case role == codec.RoleAssistant && p.Type == "refusal":
		return codec.Part{Kind: codec.PartText, Text: p.Refusal}, nil
	case role == codec.RoleUser && p.Type == "input_image":
		return d.image(name, p)
	case role == codec.RoleUser && p.Type == "input_file":
		return d.file(name, p)
	case p.Type == "":
		return codec.Part{}, param.Invalid(name+".type", "Missing required parameter: '"+name+".type'.")
	}
	return codec.Part{}, param.Invalid(name+".type", "Content parts of type '"+p.Type+"' cannot be translated here for the provider that serves this model.")
}

func (d *requestDecoder) image(name string, p *wirePart) (codec.Part, *codec.Error) { // name: see part
	cp := codec.Part{Kind: codec.PartImage}
	if p.Detail != "" && p.Detail != "auto" {
		d.Drop("input_image.detail")
	}
	if param.ImageURL(p.ImageURL, &cp) {
		return cp, nil
	}
	if p.FileID != "" {
		return cp, param.Invalid(name+".file_id", "Uploaded files (file_id) cannot be used with the provider that serves this model; send the image as image_url.")
	}
	return cp, param.Invalid(name+".image_url", "Invalid image URL: expected a base64 data URL or an http(s) URL.")
}

// file reads an input_file: inline data (a data URL, or plain base64 taken
// as a PDF) or a URL. name: see part.
func (d *requestDecoder) file(name string, p *wirePart) (codec.Part, *codec.Error) {
	cp := codec.Part{Kind: codec.PartDocument, Title: p.Filename}
	switch {
	case p.FileData != "":
		if mt, data, ok := rawjson.ParseDataURL(p.FileData); ok {
			cp.MediaType, cp.Data = mt, data
		} else {
			cp.MediaType, cp.Data = "application/pdf", p.FileData
		}
	case strings.HasPrefix(p.FileURL, "https://") || strings.HasPrefix(p.FileURL, "http://"):
		cp.MediaType, cp.URL = "application/pdf", p.FileURL
	case p.FileID != "":
		return cp, param.Invalid(name+".file_id", "Uploaded files (file_id) cannot be used with the provider that serves this model; send the file inline as file_data.")
	default:
		return cp, param.Invalid(name, "Missing required parameter: '"+name+".file_data'.")
	}
	return cp, nil
}

func (d *requestDecoder) call(i int, it *wireItem) *codec.Error {
	if it.CallID == "" {
		return param.Invalid(itemParam(i, "call_id"), "Missing required parameter: '"+itemParam(i, "call_id")+"'.")
	}
	if it.Name == "" {
		return param.Invalid(itemParam(i, "name"), "Missing required parameter: '"+itemParam(i, "name")+"'.")
	}
	msg := d.assistantTurn()
	msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartToolCall, ID: it.CallID, Name: it.Name, Arguments: arguments(it.Arguments)})
	return nil
}

// arguments returns a call's arguments, "{}" for none.
var arguments = param.Arguments

// callOutput adds a function call output to the user turn of tool results
// under way, named after the call it answers.
func (d *requestDecoder) callOutput(i int, it *wireItem) *codec.Error {
	if it.CallID == "" {
		return param.Invalid(itemParam(i, "call_id"), "Missing required parameter: '"+itemParam(i, "call_id")+"'.")
	}
	content, err := d.outputContent(i, it.Output)
	if err != nil {
		return err
	}
	d.AddToolResult(it.CallID, d.R.CallName(it.CallID), content)
	return nil
}

// outputContent reads a function call's output: a string, or text and
// image parts.
func (d *requestDecoder) outputContent(i int, v rawValue) ([]codec.Part, *codec.Error) {
	var wp []wirePart
	ok := false
	switch rawjson.KindOf(v) {
	case rawjson.KindString:
		return appendText(nil, v, i, "output")
	case rawjson.KindArray:
		wp, ok = d.contentParts(v)
	}
	if !ok {
		return nil, param.Invalid(itemParam(i, "output"), "'output' must be a string or an array of content parts")
	}
	content := make([]codec.Part, 0, len(wp))
	for j := range wp {
		p, err := d.part(&wp[j], codec.RoleUser)
		if err != nil {
			return nil, located(err, itemParam(i, "output")+"["+strconv.Itoa(j)+"]")
		}
		content = append(content, p)
	}
	return content, nil
}

// reasoningItem adds a reasoning item to the assistant turn: its summary
// (else its reasoning text) and encrypted content as a thinking part, or
// redacted thinking carried in encrypted_content (see encryptedContent).
func (d *requestDecoder) reasoningItem(i int, it *wireItem) {
	if data, ok := strings.CutPrefix(it.EncryptedContent, redactedPrefix); ok {
		msg := d.assistantTurn()
		msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartRedactedThinking, Data: data})
		return
	}
	text := joinTexts(it.Summary)
	if text == "" && rawjson.KindOf(it.Content) == rawjson.KindArray {
		if content, ok := scratchArray(it.Content, &d.W.summaries); ok {
			text = joinTexts(content)
		}
	}
	if text == "" && it.EncryptedContent == "" {
		return // carries nothing
	}
	p := codec.Part{Kind: codec.PartThinking, Text: text}
	if it.EncryptedContent != "" {
		p.Signature, p.SigOrigin = codec.SplitSignature(it.EncryptedContent, codec.DialectOpenAI)
	}
	msg := d.assistantTurn()
	msg.Parts = append(msg.Parts, p)
}

// joinTexts joins the texts of summary parts with blank lines.
func joinTexts(parts []wireSummary) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0].Text
	}
	var b strings.Builder
	for i := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(parts[i].Text)
	}
	return b.String()
}

func (d *requestDecoder) tools() *codec.Error {
	for i := range d.W.Tools {
		t := &d.W.Tools[i]
		switch t.Type {
		case "function":
		case "":
			return param.Invalid(toolParam(i, "type"), "Missing required parameter: '"+toolParam(i, "type")+"'.")
		default:
			return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: toolParam(i, "type"), Code: "unsupported_tool",
				Message: "The built-in tool '" + t.Type + "' cannot be run by the provider that serves this model: only function tools can be translated."}
		}
		f := param.Function{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}
		tool, err := f.Tool(func() string { return "tools[" + strconv.Itoa(i) + "]" })
		if err != nil {
			return err
		}
		d.R.Tools = append(d.R.Tools, tool)
	}
	return nil
}

func toolParam(i int, member string) string { return "tools[" + strconv.Itoa(i) + "]." + member }

func (d *requestDecoder) toolChoice() *codec.Error {
	w, c := d.W, &d.R.Choice
	parallel, err := param.BoolOr(w.ParallelToolCalls, "parallel_tool_calls", true)
	if err != nil {
		return err
	}
	c.DisableParallel = !parallel
	v := w.ToolChoice
	switch rawjson.KindOf(v) {
	case rawjson.KindInvalid, rawjson.KindNull:
		return nil
	case rawjson.KindString:
		s, _ := rawjson.Unquote(v)
		return param.ToolMode(s, c)
	case rawjson.KindObject:
	default:
		return param.Invalid("tool_choice", "'tool_choice' must be a string or an object")
	}
	tc := &d.W.choice
	var bad mismatch
	if readObject(v, tc, topDepth+1, "", &bad) < 0 || bad.found {
		return param.Invalid("tool_choice", "'tool_choice' is not a valid tool choice")
	}
	switch {
	case tc.Type == "function" && tc.Name != "":
		c.Mode, c.Name = codec.ToolSpecific, tc.Name
	case tc.Type == "allowed_tools" && (tc.Mode == "auto" || tc.Mode == "required"):
		// The mode survives; the restriction to a subset of the tools does not.
		if tc.Mode == "required" {
			c.Mode = codec.ToolRequired
		}
		d.Drop("tool_choice.tools")
	case tc.Type == "function" || tc.Type == "allowed_tools":
		return param.Invalid("tool_choice", "'tool_choice' must name a function: {\"type\":\"function\",\"name\":…}")
	default:
		return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: "tool_choice.type", Code: "unsupported_tool",
			Message: "The built-in tool '" + tc.Type + "' cannot be run by the provider that serves this model: only function tools can be translated."}
	}
	return nil
}

func (d *requestDecoder) settings() *codec.Error {
	w, r := d.W, d.R
	var err *codec.Error
	if r.MaxTokens, err = param.MaxTokens(w.MaxOutputTokens, "max_output_tokens"); err != nil {
		return err
	}
	if r.Temperature, err = param.Float(w.Temperature, "temperature"); err != nil {
		return err
	}
	if r.TopP, err = param.Float(w.TopP, "top_p"); err != nil {
		return err
	}
	r.User = w.User
	if r.User == "" {
		r.User = w.SafetyIdentifier
	}
	r.Stream, err = param.Bool(w.Stream, "stream")
	return err
}

func (d *requestDecoder) format() *codec.Error {
	f, rf := &d.W.Text.Format, &d.R.Format
	switch f.Type {
	case "", "text":
	case "json_object":
		rf.Kind = codec.FormatJSON
	case "json_schema":
		if err := param.SchemaFormat(f.Name, f.Schema, f.Strict, "text.format.", rf); err != nil {
			return err
		}
		if f.Description != "" {
			d.Drop("text.format.description")
		}
	default:
		return param.Invalid("text.format.type", "Invalid value: '"+f.Type+"'. Supported values are: 'text', 'json_object' and 'json_schema'.")
	}
	return nil
}

// reasoning reads reasoning.effort as the chat styles read
// reasoning_effort, and asks for the reasoning text when a summary is.
func (d *requestDecoder) reasoning() *codec.Error {
	rs, th := &d.W.Reasoning, &d.R.Thinking
	if err := param.Effort(rs.Effort, "reasoning.effort", th); err != nil {
		return err
	}
	summary := rs.Summary
	if summary == "" {
		summary = rs.GenerateSummary
	}
	switch summary {
	case "":
	case "auto", "concise", "detailed":
		th.Show = true
		d.R.Session.ReasoningSummary = summary
	default:
		return param.Invalid("reasoning.summary", "Invalid value: '"+summary+"'. Supported values are: 'auto', 'concise' and 'detailed'.")
	}
	return nil
}

// session reads what the gateway keeps or echoes.
func (d *requestDecoder) session() *codec.Error {
	w, s := d.W, &d.R.Session
	s.PreviousID = w.PreviousResponseID
	var err *codec.Error
	if s.Store, err = param.BoolOr(w.Store, "store", true); err != nil {
		return err
	}
	switch rawjson.KindOf(w.Metadata) {
	case rawjson.KindInvalid, rawjson.KindNull:
	case rawjson.KindObject:
		s.Metadata = rawjson.UnsafeString(w.Metadata)
	default:
		return param.Invalid("metadata", "'metadata' must be an object")
	}
	return nil
}

// droppedFields names the request fields the canonical model cannot carry.
func (d *requestDecoder) droppedFields() {
	w := d.W
	d.DropPresent(param.Member{Name: "max_tool_calls", Value: w.MaxToolCalls},
		param.Member{Name: "prompt_cache_key", Value: w.PromptCacheKey},
		param.Member{Name: "prompt_cache_retention", Value: w.PromptCacheRetention},
		param.Member{Name: "service_tier", Value: w.ServiceTier}, param.Member{Name: "stream_options", Value: w.StreamOptions},
		param.Member{Name: "top_logprobs", Value: w.TopLogprobs}, param.Member{Name: "text.verbosity", Value: w.Text.Verbosity},
		param.Member{Name: "access_programs", Value: w.AccessPrograms},
		param.Member{Name: "context_management", Value: w.ContextManagement},
		param.Member{Name: "moderation", Value: w.Moderation},
		param.Member{Name: "prompt_cache_options", Value: w.PromptCacheOptions})
	if rawjson.KindOf(w.Truncation) == rawjson.KindString { // Unquote of nothing makes an error
		if s, _ := rawjson.Unquote(w.Truncation); s == "auto" {
			d.Drop("truncation")
		}
	}
	for _, inc := range w.Include {
		if inc != "reasoning.encrypted_content" { // always given: the next turn needs it
			d.Drop("include")
		}
	}
}

// located puts the name of the part an error of part (or image, file)
// is about before the member it names, in its Param and its message.
func located(err *codec.Error, name string) *codec.Error {
	err.Message = strings.ReplaceAll(err.Message, "'"+err.Param, "'"+name+err.Param)
	err.Param = name + err.Param
	return err
}
