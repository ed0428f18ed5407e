package anthropic

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// DecodeRequestOptions reads a Messages request of the API version in o
// (2023-06-01 for the zero Options) into r (which it resets). A request the
// API would reject for a missing or malformed field gets a 400 naming the
// field.
func DecodeRequestOptions(body []byte, r *codec.Request, o Options) *codec.Error {
	return decodeRequest(body, r, o, false)
}

// DecodeCountTokens reads a count_tokens request: a Messages request without
// max_tokens (and with no use for stream or sampling settings).
func DecodeCountTokens(body []byte, r *codec.Request, o Options) *codec.Error {
	return decodeRequest(body, r, o, true)
}

func decodeRequest(body []byte, r *codec.Request, o Options, countTokens bool) *codec.Error {
	r.Reset()
	if o.Version != "" && !KnownVersion(o.Version) {
		return invalid("anthropic-version", fmt.Sprintf("anthropic-version: %q is not a supported API version (use %s or %s)",
			o.Version, Version20230601, Version20261021))
	}
	w := requestPool.Get().(*wireRequest)
	defer func() {
		w.reset()
		requestPool.Put(w)
	}()
	if err := w.json.decode(body, w); err != nil {
		return invalid("", "The request body could not be read: "+describeJSONError(err))
	}
	d := requestDecoder{w: w, r: r, o: o}
	return d.decode(countTokens)
}

// requestDecoder turns a decoded wireRequest into a canonical request.
type requestDecoder struct {
	w *wireRequest
	r *codec.Request
	o Options
}

func (d *requestDecoder) decode(countTokens bool) *codec.Error {
	w, r := d.w, d.r
	if err := d.model(); err != nil {
		return err
	}
	if err := d.scalars(countTokens); err != nil {
		return err
	}
	if err := d.system(); err != nil {
		return err
	}
	if err := d.messages(); err != nil {
		return err
	}
	if err := d.tools(); err != nil {
		return err
	}
	if err := d.toolChoice(); err != nil {
		return err
	}
	if err := d.thinking(countTokens); err != nil {
		return err
	}
	for _, s := range w.StopSequences {
		if strings.TrimSpace(s) == "" {
			// The API's own check (its message, as BerriAI/litellm#3286 shows).
			return invalid("stop_sequences", "stop_sequences: each stop sequence must contain non-whitespace")
		}
	}
	r.Stop = append(r.Stop, w.StopSequences...)
	r.User = w.Metadata.UserID
	return nil
}

func (d *requestDecoder) model() *codec.Error {
	m := d.w.Model
	if !present(m) {
		return invalid("model", "model: Field required")
	}
	s, err := rawjson.Unquote(m)
	if err != nil || s == "" {
		return invalid("model", "model: Input should be a non-empty string")
	}
	d.r.Model = s
	return nil
}

// scalars reads max_tokens, stream and the sampling settings.
func (d *requestDecoder) scalars(countTokens bool) *codec.Error {
	w, r := d.w, d.r
	switch {
	case present(w.MaxTokens):
		n, ok := parseInt(w.MaxTokens)
		if !ok || n < 1 {
			return invalid("max_tokens", "max_tokens: Input should be an integer greater than or equal to 1")
		}
		r.MaxTokens = n
	case !countTokens:
		return invalid("max_tokens", "max_tokens: Field required")
	}
	if present(w.Stream) {
		switch string(w.Stream) {
		case "true":
			r.Stream = !countTokens
		case "false":
		default:
			return invalid("stream", "stream: Input should be a valid boolean")
		}
	}
	if d.o.v2026() {
		// The version removed them: the API rejects them even at their
		// defaults, and so does the gateway, so that a client sees the same
		// answer whichever upstream serves it.
		for _, f := range [...]struct {
			name string
			v    rawValue
		}{{"temperature", w.Temperature}, {"top_p", w.TopP}, {"top_k", w.TopK}} {
			if len(f.v) > 0 {
				return invalid(f.name, f.name+": Extra inputs are not permitted")
			}
		}
		return nil
	}
	var err *codec.Error
	if r.Temperature, err = parseFloatField("temperature", w.Temperature, 0, 1); err != nil {
		return err
	}
	if r.TopP, err = parseFloatField("top_p", w.TopP, 0, 1); err != nil {
		return err
	}
	if present(w.TopK) {
		n, ok := parseInt(w.TopK)
		if !ok || n < 0 {
			return invalid("top_k", "top_k: Input should be a non-negative integer")
		}
		r.TopK = &n
	}
	return nil
}

func parseFloatField(name string, v rawValue, lo, hi float64) (*float64, *codec.Error) {
	if !present(v) {
		return nil, nil
	}
	f, err := strconv.ParseFloat(rawjson.UnsafeString(v), 64)
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		return nil, invalid(name, fmt.Sprintf("%s: Input should be a number between %g and %g", name, lo, hi))
	}
	return &f, nil
}

// parseInt reads a JSON integer literal.
func parseInt(v rawValue) (int, bool) {
	n, err := strconv.ParseInt(rawjson.UnsafeString(v), 10, 64)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, false
	}
	return int(n), true
}

// system reads the system prompt: a string, or an array of text blocks.
func (d *requestDecoder) system() *codec.Error {
	v := d.w.System
	if !present(v) {
		return nil
	}
	if v[0] == '"' {
		s, err := rawjson.Unquote(v)
		if err != nil {
			return invalid("system", "system: Input should be a valid string")
		}
		if s != "" {
			d.r.System = append(d.r.System, codec.Part{Kind: codec.PartText, Text: s})
		}
		return nil
	}
	if v[0] != '[' {
		return invalid("system", "system: Input should be a valid string or a list of text blocks")
	}
	return d.systemBlocks(v, "system")
}

func (d *requestDecoder) systemBlocks(v rawValue, path string) *codec.Error {
	w := d.w
	w.blocks = resetBlocks(w.blocks)
	if err := w.json.decode(v, &w.blocks); err != nil {
		return invalid(path, path+": Input should be a list of text blocks")
	}
	for i := range w.blocks {
		b := &w.blocks[i]
		if b.Type != "text" {
			p := fmt.Sprintf("%s.%d.type", path, i)
			return invalid(p, p+": Input should be 'text'")
		}
		d.r.System = append(d.r.System, codec.Part{Kind: codec.PartText, Text: b.Text,
			CacheControl: b.CacheControl.Type, CacheTTL: b.CacheControl.TTL})
	}
	return nil
}

func (d *requestDecoder) messages() *codec.Error {
	w, r := d.w, d.r
	if len(w.Messages) == 0 {
		return invalid("messages", "messages: Field required (at least one message)")
	}
	for i := range w.Messages {
		m := &w.Messages[i]
		var role codec.Role
		switch m.Role {
		case "user":
			role = codec.RoleUser
		case "assistant":
			role = codec.RoleAssistant
		case "system":
			// Mid-conversation system messages (newer models) have no
			// canonical place; leading ones are the system prompt.
			if len(r.Messages) > 0 {
				p := fmt.Sprintf("messages.%d.role", i)
				return invalid(p, p+": a system message after the first user or assistant message cannot be translated")
			}
			if err := d.systemBlocks(m.Content, fmt.Sprintf("messages.%d.content", i)); err != nil {
				return err
			}
			continue
		default:
			p := fmt.Sprintf("messages.%d.role", i)
			return invalid(p, p+": Input should be 'user' or 'assistant'")
		}
		msg := addMessage(r, role)
		if err := d.content(msg, m.Content, i); err != nil {
			return err
		}
	}
	nameResults(r)
	return nil
}

// content reads a message's content: a string, or an array of blocks.
func (d *requestDecoder) content(msg *codec.Message, v rawValue, i int) *codec.Error {
	if !present(v) {
		p := fmt.Sprintf("messages.%d.content", i)
		return invalid(p, p+": Field required")
	}
	switch v[0] {
	case '"':
		s, err := rawjson.Unquote(v)
		if err != nil {
			p := fmt.Sprintf("messages.%d.content", i)
			return invalid(p, p+": Input should be a valid string")
		}
		p := addPart(msg)
		p.Kind, p.Text = codec.PartText, s
		return nil
	case '[':
	default:
		p := fmt.Sprintf("messages.%d.content", i)
		return invalid(p, p+": Input should be a valid string or a list of content blocks")
	}
	w := d.w
	w.blocks = resetBlocks(w.blocks)
	if err := w.json.decode(v, &w.blocks); err != nil {
		p := fmt.Sprintf("messages.%d.content", i)
		return invalid(p, p+": "+describeJSONError(err))
	}
	for j := range w.blocks {
		if err := d.block(msg, &w.blocks[j], i, j); err != nil {
			return err
		}
	}
	return nil
}

// block appends the canonical part of one content block to msg.
func (d *requestDecoder) block(msg *codec.Message, b *wireBlock, i, j int) *codec.Error {
	switch b.Type {
	case "text", "image", "document":
		p := addPart(msg)
		return d.media(p, b, msg.Role, blockPath{i, j, -1})
	case "tool_use":
		id, sig := DecodeToolID(b.ID)
		args, err := toolInput(b.Input)
		if err != nil || id == "" || b.Name == "" {
			p := fmt.Sprintf("messages.%d.content.%d", i, j)
			return invalid(p, p+": a tool_use block needs an id, a name and an object input")
		}
		p := addPart(msg)
		*p = codec.Part{Kind: codec.PartToolCall, ID: id, Name: b.Name, Arguments: args, Signature: sig,
			CacheControl: b.CacheControl.Type, CacheTTL: b.CacheControl.TTL, Content: p.Content}
	case "tool_result":
		return d.toolResult(msg, b, i, j)
	case "thinking":
		p := addPart(msg)
		p.Kind, p.Text = codec.PartThinking, b.Thinking
		p.Signature, p.SigOrigin = codec.SplitSignature(b.Signature, codec.DialectAnthropic)
	case "redacted_thinking":
		p := addPart(msg)
		p.Kind, p.Data = codec.PartRedactedThinking, b.Data
	default:
		// search_result, server_tool_use, web_search_tool_result,
		// container_upload and the like exist only on Anthropic's side.
		p := fmt.Sprintf("messages.%d.content.%d.type", i, j)
		return invalid(p, fmt.Sprintf("%s: content blocks of type %q cannot be translated for this model", p, b.Type))
	}
	return nil
}

// blockPath locates a content block for error messages: messages.I.content.J,
// and .content.K inside a tool_result when K >= 0.
type blockPath struct{ i, j, k int }

func (b blockPath) String() string {
	if b.k < 0 {
		return fmt.Sprintf("messages.%d.content.%d", b.i, b.j)
	}
	return fmt.Sprintf("messages.%d.content.%d.content.%d", b.i, b.j, b.k)
}

// media fills p from a text, image or document block.
func (d *requestDecoder) media(p *codec.Part, b *wireBlock, role codec.Role, at blockPath) *codec.Error {
	p.CacheControl, p.CacheTTL = b.CacheControl.Type, b.CacheControl.TTL
	var src wireSource
	if b.Type == "image" || b.Type == "document" {
		if !present(b.Source) || d.w.json.decode(b.Source, &src) != nil {
			path := at.String() + ".source"
			return invalid(path, path+": Input should be a valid source object")
		}
	}
	switch b.Type {
	case "text":
		if d.o.v2026() && role == codec.RoleUser && present(b.Citations) && string(b.Citations) != "[]" {
			path := at.String() + ".citations"
			return invalid(path, path+": text blocks in user messages may not carry citations in API version "+Version20261021)
		}
		p.Kind, p.Text = codec.PartText, b.Text
		return nil
	case "image":
		p.Kind = codec.PartImage
		switch src.Type {
		case "base64":
			p.MediaType, p.Data = src.MediaType, src.Data
			return nil
		case "url":
			p.URL = src.URL
			return nil
		}
	case "document":
		if d.o.v2026() && role == codec.RoleAssistant && at.k < 0 {
			path := at.String()
			return invalid(path, path+": document blocks may not appear directly in assistant messages in API version "+Version20261021)
		}
		p.Kind, p.Title = codec.PartDocument, b.Title
		switch src.Type {
		case "base64":
			p.MediaType, p.Data = src.MediaType, src.Data
			return nil
		case "url":
			p.MediaType, p.URL = "application/pdf", src.URL
			return nil
		case "text":
			// Canonical Data is base64 for every media type.
			p.MediaType, p.Data = "text/plain", base64.StdEncoding.EncodeToString(rawjson.UnsafeBytes(src.Data))
			return nil
		}
	default:
		path := at.String() + ".type"
		return invalid(path, fmt.Sprintf("%s: content blocks of type %q cannot be translated for this model", path, b.Type))
	}
	path := at.String() + ".source"
	return invalid(path, fmt.Sprintf("%s: a %s source of type %q cannot be translated for this model", path, b.Type, src.Type))
}

func (d *requestDecoder) toolResult(msg *codec.Message, b *wireBlock, i, j int) *codec.Error {
	id, _ := DecodeToolID(b.ToolUseID)
	if id == "" {
		p := fmt.Sprintf("messages.%d.content.%d.tool_use_id", i, j)
		return invalid(p, p+": Field required")
	}
	p := addPart(msg)
	p.Kind, p.ID, p.IsError = codec.PartToolResult, id, b.IsError
	p.CacheControl, p.CacheTTL = b.CacheControl.Type, b.CacheControl.TTL
	v := b.Content
	if !present(v) {
		return nil
	}
	if v[0] == '"' {
		s, err := rawjson.Unquote(v)
		if err != nil {
			path := fmt.Sprintf("messages.%d.content.%d.content", i, j)
			return invalid(path, path+": Input should be a valid string")
		}
		p.Content = append(p.Content, codec.Part{Kind: codec.PartText, Text: s})
		return nil
	}
	w := d.w
	w.inner = resetBlocks(w.inner)
	if err := w.json.decode(v, &w.inner); err != nil {
		path := fmt.Sprintf("messages.%d.content.%d.content", i, j)
		return invalid(path, path+": Input should be a valid string or a list of content blocks")
	}
	for k := range w.inner {
		p.Content = append(p.Content, codec.Part{})
		if err := d.media(&p.Content[len(p.Content)-1], &w.inner[k], msg.Role, blockPath{i, j, k}); err != nil {
			return err
		}
	}
	return nil
}

// toolInput checks a tool_use input (a JSON object) and returns it as text.
func toolInput(v rawValue) (string, error) {
	if !present(v) {
		return "{}", nil
	}
	if !verbatimObject(v) {
		return "", errNotObject
	}
	return rawjson.UnsafeString(v), nil
}

// verbatimObject reports whether a raw member is an object that can be
// copied to an output as it is: sonic checked its structure, this checks its
// strings.
func verbatimObject(v rawValue) bool {
	return len(v) > 0 && v[0] == '{' && rawjson.ValidStrings(v)
}

var errNotObject = fmt.Errorf("not a JSON object")

// nameResults gives every tool result the name of the call it answers:
// Anthropic pairs them by id only, Gemini by name.
func nameResults(r *codec.Request) {
	for i := range r.Messages {
		parts := r.Messages[i].Parts
		for j := range parts {
			if parts[j].Kind == codec.PartToolResult && parts[j].Name == "" {
				parts[j].Name = callName(r.Messages[:i+1], parts[j].ID)
			}
		}
	}
}

// callName finds the name of the tool call with id, latest first.
func callName(msgs []codec.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		parts := msgs[i].Parts
		for j := len(parts) - 1; j >= 0; j-- {
			if parts[j].Kind == codec.PartToolCall && parts[j].ID == id {
				return parts[j].Name
			}
		}
	}
	return ""
}

func (d *requestDecoder) tools() *codec.Error {
	for i := range d.w.Tools {
		t := &d.w.Tools[i]
		if t.Type != "" && t.Type != "custom" {
			// Server tools (web_search, code_execution…) and Anthropic-defined
			// client tools (bash, text_editor…) run on or are defined by
			// Anthropic: another provider cannot honour them.
			p := fmt.Sprintf("tools.%d.type", i)
			return invalid(p, fmt.Sprintf("%s: the tool type %q exists only on Anthropic and cannot be translated for this model", p, t.Type))
		}
		if t.Name == "" {
			p := fmt.Sprintf("tools.%d.name", i)
			return invalid(p, p+": Field required")
		}
		if !verbatimObject(t.InputSchema) {
			p := fmt.Sprintf("tools.%d.input_schema", i)
			return invalid(p, p+": Input should be a JSON Schema object")
		}
		d.r.Tools = append(d.r.Tools, codec.Tool{Name: t.Name, Description: t.Description,
			Parameters: rawjson.UnsafeString(t.InputSchema), Strict: t.Strict, CacheControl: t.CacheControl.Type})
	}
	return nil
}

func (d *requestDecoder) toolChoice() *codec.Error {
	tc := &d.w.ToolChoice
	c := &d.r.Choice
	c.DisableParallel = tc.DisableParallelToolUse
	switch tc.Type {
	case "", "auto":
		c.Mode = codec.ToolAuto
	case "any":
		c.Mode = codec.ToolRequired
	case "none":
		c.Mode = codec.ToolNone
	case "tool":
		if tc.Name == "" {
			return invalid("tool_choice.name", "tool_choice.name: Field required")
		}
		c.Mode, c.Name = codec.ToolSpecific, tc.Name
	default:
		return invalid("tool_choice.type", "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	return nil
}

// thinking reads thinking and output_config, and applies DESIGN §3: a
// budget of at least 1024 tokens, below max_tokens.
func (d *requestDecoder) thinking(countTokens bool) *codec.Error {
	w, r := d.w, d.r
	th := &w.Thinking
	switch th.Type {
	case "", "disabled":
	case "enabled":
		n, ok := 0, present(th.BudgetTokens)
		if ok {
			n, ok = parseInt(th.BudgetTokens)
		}
		if !ok {
			return invalid("thinking.budget_tokens", "thinking.budget_tokens: Field required (an integer)")
		}
		if n < minThinkingBudget {
			return invalid("thinking.budget_tokens", "thinking.budget_tokens: Input should be greater than or equal to 1024")
		}
		if (!countTokens || r.MaxTokens > 0) && r.MaxTokens <= n {
			return invalid("max_tokens", "max_tokens: must be greater than thinking.budget_tokens")
		}
		r.Thinking.Enabled, r.Thinking.Budget = true, n
	case "adaptive", "between_tools":
		r.Thinking.Enabled = true
	default:
		return invalid("thinking.type", "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'")
	}
	r.Thinking.Show = r.Thinking.Enabled && th.Display != "omitted"
	oc := &w.OutputConfig
	r.Thinking.Effort = oc.Effort
	switch oc.Format.Type {
	case "":
	case "json_schema":
		if !verbatimObject(oc.Format.Schema) {
			return invalid("output_config.format.schema", "output_config.format.schema: Input should be a JSON Schema object")
		}
		r.Format = codec.ResponseFormat{Kind: codec.FormatJSONSchema, Schema: rawjson.UnsafeString(oc.Format.Schema)}
	default:
		return invalid("output_config.format.type", "output_config.format.type: Input should be 'json_schema'")
	}
	return nil
}

// addMessage appends a message to r, reusing the capacity of the parts of an
// earlier request's message in that slot.
func addMessage(r *codec.Request, role codec.Role) *codec.Message { return r.AddMessage(role) }

// addPart appends an empty part to m, reusing the capacity of the tool
// result content of an earlier part in that slot.
func addPart(m *codec.Message) *codec.Part {
	n := len(m.Parts)
	if n < cap(m.Parts) {
		m.Parts = m.Parts[:n+1]
		content := m.Parts[n].Content[:0]
		m.Parts[n] = codec.Part{Content: content}
	} else {
		m.Parts = append(m.Parts, codec.Part{})
	}
	return &m.Parts[n]
}

var errNotString = fmt.Errorf("not a JSON string")

func invalid(param, msg string) *codec.Error {
	return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: param, Message: msg}
}
