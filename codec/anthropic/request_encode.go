package anthropic

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Names of the features AppendRequestOptions drops, as it reports them.
const (
	DroppedTemperature       = "temperature"
	DroppedTopP              = "top_p"
	DroppedTopK              = "top_k"
	DroppedSeed              = "seed"
	DroppedResponseFormat    = "response_format"
	DroppedThinking          = "thinking"
	DroppedEffort            = "reasoning_effort"
	DroppedUnsignedThinking  = "thinking_block_without_signature"
	DroppedAssistantDocument = "document_in_assistant_message"
	DroppedBlankStop         = "blank_stop_sequence"
	DroppedEmptyMessage      = "empty_message"
)

// AppendRequestOptions appends the Messages request body for an upstream of
// the API version in o (2023-06-01 for the zero Options). The strings name
// the features dropped on the way (the Dropped* constants).
// Under 2026-10-21 temperature, top_p and top_k are dropped (and reported),
// and so are documents in assistant messages.
func AppendRequestOptions(dst []byte, r *codec.Request, o Options) ([]byte, []string, *codec.Error) {
	e := requestEncoder{r: r, o: o}
	return e.append(dst, false)
}

// AppendCountTokensRequest appends the body of a count_tokens request for
// r: the Messages body without max_tokens, stream, sampling settings, stop
// sequences and metadata, which count_tokens does not accept.
func AppendCountTokensRequest(dst []byte, r *codec.Request, o Options) ([]byte, []string, *codec.Error) {
	e := requestEncoder{r: r, o: o}
	return e.append(dst, true)
}

// requestEncoder writes a canonical request as an Anthropic body.
type requestEncoder struct {
	r       *codec.Request
	o       Options
	dropped []string
}

func (e *requestEncoder) drop(name string) {
	for _, d := range e.dropped {
		if d == name {
			return
		}
	}
	e.dropped = append(e.dropped, name)
}

func (e *requestEncoder) append(dst []byte, countTokens bool) ([]byte, []string, *codec.Error) {
	r := e.r
	if !e.hasContent() {
		return dst, nil, invalid("messages", "messages: at least one message with content is required")
	}
	if where, url := r.ForeignFile(codec.DialectAnthropic); where != "" {
		return dst, nil, invalid(where, codec.ForeignFileMessage(where, url))
	}
	for i := range r.Tools {
		if !validSchema(r.Tools[i].Parameters) {
			p := "tools." + strconv.Itoa(i) + ".input_schema"
			return dst, nil, invalid(p, p+": the parameters of tool "+strconv.Quote(r.Tools[i].Name)+" are not a JSON Schema object")
		}
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	dst = append(dst, `{"model":`...)
	dst = rawjson.AppendString(dst, r.Model)
	if !countTokens {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(maxTokens), 10)
	}
	dst = e.appendSystem(dst)
	dst = e.appendMessages(dst)
	dst = e.appendTools(dst)
	thinking := e.thinkingMode(maxTokens)
	dst = e.appendToolChoice(dst)
	dst = e.appendThinking(dst, thinking)
	dst = e.appendOutputConfig(dst)
	if r.Seed != nil {
		e.drop(DroppedSeed)
	}
	if !countTokens {
		dst = e.appendSampling(dst, thinking.on)
		dst = e.appendStops(dst)
		if r.User != "" {
			dst = append(dst, `,"metadata":{"user_id":`...)
			dst = rawjson.AppendString(dst, r.User)
			dst = append(dst, '}')
		}
		if r.Stream {
			dst = append(dst, `,"stream":true`...)
		}
	}
	return append(dst, '}'), e.dropped, nil
}

func (e *requestEncoder) appendSystem(dst []byte) []byte {
	sys := e.r.System
	n, cached := 0, false
	for i := range sys {
		if sys[i].Text != "" {
			n++
			cached = cached || sys[i].CacheControl != ""
		}
	}
	switch {
	case n == 0:
		return dst
	case n == 1 && !cached:
		for i := range sys {
			if sys[i].Text != "" {
				dst = append(dst, `,"system":`...)
				return rawjson.AppendString(dst, sys[i].Text)
			}
		}
	}
	dst = append(dst, `,"system":[`...)
	first := true
	for i := range sys {
		if sys[i].Text == "" {
			continue // the API rejects empty text blocks
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendTextBlock(dst, &sys[i])
	}
	return append(dst, ']')
}

func (e *requestEncoder) appendMessages(dst []byte) []byte {
	dst = append(dst, `,"messages":[`...)
	first := true
	for i := range e.r.Messages {
		m := &e.r.Messages[i]
		if !e.hasBlocks(m) {
			e.drop(DroppedEmptyMessage)
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"role":"`...)
		dst = append(dst, m.Role.String()...)
		dst = append(dst, `","content":`...)
		dst = e.appendContent(dst, m)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendContent writes a message's content: a plain string for a lone text
// part, an array of blocks otherwise. Tool results come first: the API
// rejects a user message with text before its tool_result blocks.
func (e *requestEncoder) appendContent(dst []byte, m *codec.Message) []byte {
	if p := e.loneBlock(m); p != nil && p.Kind == codec.PartText && p.CacheControl == "" {
		return rawjson.AppendString(dst, p.Text)
	}
	dst = append(dst, '[')
	first := true
	for pass := 0; pass < 2; pass++ {
		for i := range m.Parts {
			p := &m.Parts[i]
			if (p.Kind == codec.PartToolResult) != (pass == 0) || !e.keep(p, m.Role) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = e.appendBlock(dst, p)
		}
	}
	return append(dst, ']')
}

// loneBlock returns the part of m that is its only block upstream, or nil.
// It notes what m drops.
func (e *requestEncoder) loneBlock(m *codec.Message) *codec.Part {
	var lone *codec.Part
	for i := range m.Parts {
		if e.keep(&m.Parts[i], m.Role) {
			if lone != nil {
				lone = nil
				break
			}
			lone = &m.Parts[i]
		}
	}
	return lone
}

// kept reports whether p becomes a block upstream.
func (e *requestEncoder) kept(p *codec.Part, role codec.Role) bool {
	switch p.Kind {
	case codec.PartText:
		return p.Text != ""
	case codec.PartThinking:
		return p.SignedFor(codec.DialectAnthropic) != ""
	case codec.PartRedactedThinking:
		return p.Data != ""
	case codec.PartDocument:
		return hasSource(p) && (role != codec.RoleAssistant || !e.o.v2026())
	case codec.PartImage:
		return hasSource(p)
	}
	return true
}

func hasSource(p *codec.Part) bool { return p.Data != "" || p.URL != "" }

// keptResult reports whether a part of a tool result's content is sent.
func keptResult(p *codec.Part) bool {
	switch p.Kind {
	case codec.PartText:
		return p.Text != ""
	case codec.PartImage, codec.PartDocument:
		return hasSource(p)
	}
	return false
}

// keep reports whether p becomes a block upstream, noting what it drops.
func (e *requestEncoder) keep(p *codec.Part, role codec.Role) bool {
	if e.kept(p, role) {
		return true
	}
	switch p.Kind {
	case codec.PartThinking:
		// The API verifies the signature of every thinking block it is
		// sent; one without, or signed by another provider, cannot go
		// back.
		e.drop(DroppedUnsignedThinking)
	case codec.PartDocument:
		e.drop(DroppedAssistantDocument)
	}
	return false
}

func (e *requestEncoder) hasBlocks(m *codec.Message) bool {
	for i := range m.Parts {
		if e.kept(&m.Parts[i], m.Role) {
			return true
		}
	}
	return false
}

// hasContent reports whether any message has a block to send.
func (e *requestEncoder) hasContent() bool {
	for i := range e.r.Messages {
		if e.hasBlocks(&e.r.Messages[i]) {
			return true
		}
	}
	return false
}

// appendBlock writes one part as a request content block.
func (e *requestEncoder) appendBlock(dst []byte, p *codec.Part) []byte {
	switch p.Kind {
	case codec.PartToolCall:
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = appendUpstreamID(dst, p.ID)
		dst = append(dst, `,"name":`...)
		dst = rawjson.AppendString(dst, p.Name)
		dst = append(dst, `,"input":`...)
		dst = appendInput(dst, p.Arguments)
		dst = appendCacheControl(dst, p)
		return append(dst, '}')
	case codec.PartToolResult:
		return e.appendToolResult(dst, p)
	}
	return appendContentBlock(dst, p)
}

func (e *requestEncoder) appendToolResult(dst []byte, p *codec.Part) []byte {
	dst = append(dst, `{"type":"tool_result","tool_use_id":`...)
	dst = appendUpstreamID(dst, p.ID)
	var lone *codec.Part
	n := 0
	for i := range p.Content {
		if keptResult(&p.Content[i]) {
			lone = &p.Content[i]
			n++
		}
	}
	switch {
	case n == 0:
	case n == 1 && lone.Kind == codec.PartText && lone.CacheControl == "":
		dst = append(dst, `,"content":`...)
		dst = rawjson.AppendString(dst, lone.Text)
	default:
		dst = append(dst, `,"content":[`...)
		first := true
		for i := range p.Content {
			c := &p.Content[i]
			if !keptResult(c) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendContentBlock(dst, c)
		}
		dst = append(dst, ']')
	}
	if p.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	dst = appendCacheControl(dst, p)
	return append(dst, '}')
}

// appendContentBlock writes a text, image, document, thinking or redacted
// thinking part as a content block (of a request or a response).
func appendContentBlock(dst []byte, p *codec.Part) []byte {
	switch p.Kind {
	case codec.PartImage:
		dst = append(dst, `{"type":"image","source":`...)
		dst = appendSource(dst, p)
	case codec.PartDocument:
		dst = append(dst, `{"type":"document","source":`...)
		dst = appendSource(dst, p)
		if p.Title != "" {
			dst = append(dst, `,"title":`...)
			dst = rawjson.AppendString(dst, p.Title)
		}
	case codec.PartThinking:
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = rawjson.AppendString(dst, p.Text)
		dst = append(dst, `,"signature":`...)
		dst = rawjson.AppendString(dst, p.Signature)
		return append(dst, '}') // thinking blocks take no cache_control
	case codec.PartRedactedThinking:
		dst = append(dst, `{"type":"redacted_thinking","data":`...)
		dst = rawjson.AppendString(dst, p.Data)
		return append(dst, '}')
	default:
		return appendTextBlock(dst, p)
	}
	dst = appendCacheControl(dst, p)
	return append(dst, '}')
}

func appendTextBlock(dst []byte, p *codec.Part) []byte {
	dst = append(dst, `{"type":"text","text":`...)
	dst = rawjson.AppendString(dst, p.Text)
	dst = appendCacheControl(dst, p)
	return append(dst, '}')
}

// appendSource writes the source of an image or document: base64 data, a
// data: URL taken apart, a plain-text document, or a URL.
func appendSource(dst []byte, p *codec.Part) []byte {
	data, mediaType := p.Data, p.MediaType
	if data == "" {
		if mt, d, ok := rawjson.ParseDataURL(p.URL); ok {
			data, mediaType = d, mt
		} else {
			dst = append(dst, `{"type":"url","url":`...)
			dst = rawjson.AppendString(dst, p.URL)
			return append(dst, '}')
		}
	}
	if p.Kind == codec.PartDocument && strings.HasPrefix(mediaType, "text/") {
		if text, err := base64.StdEncoding.DecodeString(data); err == nil {
			dst = append(dst, `{"type":"text","media_type":"text/plain","data":`...)
			dst = rawjson.AppendString(dst, rawjson.UnsafeString(text))
			return append(dst, '}')
		}
	}
	if mediaType == "" && p.Kind == codec.PartDocument {
		mediaType = "application/pdf"
	}
	dst = append(dst, `{"type":"base64","media_type":`...)
	dst = rawjson.AppendString(dst, mediaType)
	dst = append(dst, `,"data":`...)
	dst = rawjson.AppendString(dst, data)
	return append(dst, '}')
}

func appendCacheControl(dst []byte, p *codec.Part) []byte {
	return appendCache(dst, p.CacheControl, p.CacheTTL)
}

func appendCache(dst []byte, typ, ttl string) []byte {
	if typ == "" {
		return dst
	}
	dst = append(dst, `,"cache_control":{"type":`...)
	dst = rawjson.AppendString(dst, typ)
	if ttl != "" {
		dst = append(dst, `,"ttl":`...)
		dst = rawjson.AppendString(dst, ttl)
	}
	return append(dst, '}')
}

// appendInput writes tool-call arguments as an input object. Arguments
// that are not a JSON object (a model's broken output relayed by an
// OpenAI-compatible server) become {} rather than invalid JSON.
func appendInput(dst []byte, args string) []byte {
	if !validObject(args) {
		return append(dst, "{}"...)
	}
	return append(dst, args...)
}

// validObject reports whether s is a JSON object that can be copied into
// the output as it is.
func validObject(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || t[0] != '{' {
		return false
	}
	b := rawjson.UnsafeBytes(s)
	return sonic.Valid(b) && rawjson.ValidStrings(b)
}

// validSchema checks a tool's parameters cheaply: decoders hand over only
// valid JSON (they check what they copy verbatim), so an object is enough.
func validSchema(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return s == "" || t != "" && t[0] == '{'
}

func (e *requestEncoder) appendTools(dst []byte) []byte {
	tools := e.r.Tools
	if len(tools) == 0 {
		return dst
	}
	dst = append(dst, `,"tools":[`...)
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = rawjson.AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = rawjson.AppendString(dst, t.Description)
		}
		dst = append(dst, `,"input_schema":`...)
		if t.Parameters == "" {
			dst = append(dst, `{"type":"object","properties":{}}`...)
		} else {
			dst = append(dst, t.Parameters...)
		}
		if t.Strict {
			dst = append(dst, `,"strict":true`...)
		}
		dst = appendCache(dst, t.CacheControl, "")
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func (e *requestEncoder) appendToolChoice(dst []byte) []byte {
	c := e.r.Choice
	var typ string
	switch c.Mode {
	case codec.ToolAuto:
		if !c.DisableParallel {
			return dst // the API's default
		}
		typ = "auto"
	case codec.ToolNone:
		return append(dst, `,"tool_choice":{"type":"none"}`...)
	case codec.ToolRequired:
		typ = "any"
	case codec.ToolSpecific:
		typ = "tool"
	default:
		return dst
	}
	dst = append(dst, `,"tool_choice":{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, '"')
	if c.Mode == codec.ToolSpecific {
		dst = append(dst, `,"name":`...)
		dst = rawjson.AppendString(dst, c.Name)
	}
	if c.DisableParallel {
		dst = append(dst, `,"disable_parallel_tool_use":true`...)
	}
	return append(dst, '}')
}

// thinkingConfig is what the upstream request says about thinking.
type thinkingConfig struct {
	on     bool
	budget int // 0: adaptive
}

// thinkingMode decides the thinking setting: a budget the API accepts
// (≥ 1024 and < max_tokens) or adaptive when the canonical request has no
// budget; none when thinking is off, when the budget cannot fit, when the
// tool choice forces a call (the API rejects thinking with forced tool use)
// or when the tool turn being answered has no thinking block.
func (e *requestEncoder) thinkingMode(maxTokens int) thinkingConfig {
	t := e.r.Thinking
	if !t.Enabled {
		return thinkingConfig{}
	}
	if m := e.r.Choice.Mode; m == codec.ToolRequired || m == codec.ToolSpecific || !e.toolTurnThought() {
		e.drop(DroppedThinking)
		return thinkingConfig{}
	}
	if t.Budget <= 0 {
		return thinkingConfig{on: true}
	}
	budget := max(t.Budget, minThinkingBudget)
	if budget >= maxTokens {
		budget = maxTokens - 1
	}
	if budget < minThinkingBudget {
		e.drop(DroppedThinking)
		return thinkingConfig{}
	}
	return thinkingConfig{on: true, budget: budget}
}

// toolTurnThought reports whether thinking may be on for the messages: when
// they end with tool results, the API wants the assistant turn that made
// the calls to start with a thinking block ("When thinking is enabled, a
// final assistant message must start with a thinking block"), which a
// history from another provider does not have (400 otherwise).
func (e *requestEncoder) toolTurnThought() bool {
	msgs := e.r.Messages
	last := len(msgs) - 1
	for last >= 0 && !e.hasBlocks(&msgs[last]) {
		last--
	}
	if last < 1 || msgs[last].Role != codec.RoleUser || !hasToolResult(&msgs[last]) {
		return true
	}
	for i := last - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role == codec.RoleAssistant && e.hasBlocks(m) {
			return e.startsWithThinking(m)
		}
	}
	return true
}

func hasToolResult(m *codec.Message) bool {
	for i := range m.Parts {
		if m.Parts[i].Kind == codec.PartToolResult {
			return true
		}
	}
	return false
}

// startsWithThinking reports whether the first block m sends is a thinking
// or redacted thinking block.
func (e *requestEncoder) startsWithThinking(m *codec.Message) bool {
	for i := range m.Parts {
		if p := &m.Parts[i]; e.kept(p, m.Role) {
			return p.Kind == codec.PartThinking || p.Kind == codec.PartRedactedThinking
		}
	}
	return false
}

func (e *requestEncoder) appendThinking(dst []byte, t thinkingConfig) []byte {
	switch {
	case !t.on:
		return dst
	case t.budget == 0:
		return append(dst, `,"thinking":{"type":"adaptive"}`...)
	}
	dst = append(dst, `,"thinking":{"type":"enabled","budget_tokens":`...)
	dst = strconv.AppendInt(dst, int64(t.budget), 10)
	return append(dst, '}')
}

// efforts maps canonical effort levels (OpenAI's reasoning_effort words
// among them) to output_config.effort.
var efforts = map[string]string{
	"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max",
}

func (e *requestEncoder) appendOutputConfig(dst []byte) []byte {
	r := e.r
	effort := ""
	if r.Thinking.Effort != "" {
		if effort = efforts[r.Thinking.Effort]; effort == "" {
			e.drop(DroppedEffort)
		}
	}
	schema := r.Format.Kind == codec.FormatJSONSchema && r.Format.Schema != "" && validSchema(r.Format.Schema)
	if r.Format.Kind != codec.FormatText && !schema {
		e.drop(DroppedResponseFormat) // no plain JSON mode on Anthropic
	}
	if effort == "" && !schema {
		return dst
	}
	dst = append(dst, `,"output_config":{`...)
	if effort != "" {
		dst = append(dst, `"effort":"`...)
		dst = append(dst, effort...)
		dst = append(dst, '"')
	}
	if schema {
		if effort != "" {
			dst = append(dst, ',')
		}
		dst = append(dst, `"format":{"type":"json_schema","schema":`...)
		dst = append(dst, r.Format.Schema...)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendSampling writes temperature, top_p and top_k where the upstream
// takes them: not at all under 2026-10-21, and with thinking on only the
// values the API allows then (temperature 1, top_p from 0.95, no top_k).
func (e *requestEncoder) appendSampling(dst []byte, thinking bool) []byte {
	r := e.r
	if t := r.Temperature; t != nil {
		switch {
		case e.o.v2026(), thinking && *t != 1:
			e.drop(DroppedTemperature)
		default:
			dst = append(dst, `,"temperature":`...)
			dst = strconv.AppendFloat(dst, clamp(*t, 0, 1), 'g', -1, 64)
		}
	}
	if p := r.TopP; p != nil {
		switch {
		case e.o.v2026(), thinking && *p < 0.95:
			e.drop(DroppedTopP)
		default:
			dst = append(dst, `,"top_p":`...)
			dst = strconv.AppendFloat(dst, clamp(*p, 0, 1), 'g', -1, 64)
		}
	}
	if k := r.TopK; k != nil {
		switch {
		case e.o.v2026(), thinking, *k < 0:
			e.drop(DroppedTopK)
		default:
			dst = append(dst, `,"top_k":`...)
			dst = strconv.AppendInt(dst, int64(*k), 10)
		}
	}
	return dst
}

// clamp keeps a value in the API's range (OpenAI's temperature goes to 2).
func clamp(v, lo, hi float64) float64 {
	switch {
	case v != v: // NaN
		return lo
	case v < lo:
		return lo
	case v > hi:
		return hi
	}
	return v
}

// appendStops writes stop_sequences, leaving out blank ones, which the API
// rejects.
func (e *requestEncoder) appendStops(dst []byte) []byte {
	first := true
	for _, s := range e.r.Stop {
		if strings.TrimSpace(s) == "" {
			e.drop(DroppedBlankStop)
			continue
		}
		if first {
			dst = append(dst, `,"stop_sequences":[`...)
			first = false
		} else {
			dst = append(dst, ',')
		}
		dst = rawjson.AppendString(dst, s)
	}
	if !first {
		dst = append(dst, ']')
	}
	return dst
}
