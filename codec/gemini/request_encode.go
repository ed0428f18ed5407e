package gemini

import (
	"math"
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// What AppendRequest reports as dropped: features of the canonical request
// that a Gemini request cannot carry.
const (
	NoteUser            = "user"
	NoteDisableParallel = "tool_choice.disable_parallel_tool_use"
	NoteStrict          = "tools.strict"
	NoteCacheControl    = "cache_control"
	NoteRedacted        = "redacted_thinking"
	NoteFormatStrict    = "response_format.strict"
	NoteBadArguments    = "tool_call.arguments (not a JSON object, sent as {})"
	NoteMisplacedPart   = "tool call or result in the wrong turn"
	NoteNotFinite       = "temperature or top_p (not a finite number)"
)

// knownCall is a tool call already written: its canonical id, the id it
// had at Gemini (without the signature) and its function name.
type knownCall struct {
	canon, id, name string
}

// requestEncoder carries what AppendRequest learns on the way through the
// conversation: the calls so far, for naming and ordering their results.
// The first calls live in an array, so that the encoder stays on the stack.
type requestEncoder struct {
	callBuf          [16]knownCall
	moreCalls        []knownCall // calls beyond the array
	ncalls           int
	lastFrom, lastTo int // the calls of the latest model turn
	dropped          []string
	noted            uint16
}

// call returns the i-th call written.
func (e *requestEncoder) call(i int) *knownCall {
	if i < len(e.callBuf) {
		return &e.callBuf[i]
	}
	return &e.moreCalls[i-len(e.callBuf)]
}

// addCall records a call written.
func (e *requestEncoder) addCall(c knownCall) {
	if e.ncalls < len(e.callBuf) {
		e.callBuf[e.ncalls] = c
	} else {
		e.moreCalls = append(e.moreCalls, c)
	}
	e.ncalls++
}

func (e *requestEncoder) note(bit uint16, what string) {
	if e.noted&bit == 0 {
		e.noted |= bit
		e.dropped = append(e.dropped, what)
	}
}

const (
	bitUser uint16 = 1 << iota
	bitDisableParallel
	bitStrict
	bitCacheControl
	bitRedacted
	bitFormatStrict
	bitBadArguments
	bitMisplaced
	bitNotFinite
)

// AppendRequest appends r as a generateContent request body, without the
// model and the stream flag (they go in the URL: AppendPath). The strings
// name the features dropped on the way (the Note constants). The error is a
// 400 for what cannot be sent at all: a tool result whose function name is
// unknown, an invalid schema.
//
// Consecutive messages of one role become one content, so that the results
// of parallel calls arrive together; in it the function responses come
// first, in the order of the calls of the preceding model turn, then their
// media, then the other parts. Each functionCall gets back the thought
// signature its id carries (DecodeCallID); a model turn whose calls have
// none gets Gemini's documented skip value on its first call.
func AppendRequest(dst []byte, r *codec.Request) ([]byte, []string, *codec.Error) {
	var e requestEncoder
	dst = append(dst, `{"contents":[`...)
	dst, err := e.appendContents(dst, r.Messages)
	if err != nil {
		return dst, nil, err
	}
	dst = append(dst, ']')
	if len(r.System) > 0 {
		dst = appendSystem(dst, r.System)
	}
	if dst, err = e.appendTools(dst, r); err != nil {
		return dst, nil, err
	}
	if dst, err = e.appendGenerationConfig(dst, r); err != nil {
		return dst, nil, err
	}
	if r.User != "" {
		e.note(bitUser, NoteUser)
	}
	return append(dst, '}'), e.dropped, nil
}

// appendContents appends the messages as contents, merging consecutive
// messages of one role. A message with nothing Gemini can take is left out
// before the merging, so that the messages on either side of it merge as
// they do when the request made here is read back.
func (e *requestEncoder) appendContents(dst []byte, msgs []codec.Message) ([]byte, *codec.Error) {
	n := 0
	for i := 0; i < len(msgs); {
		if !carries(&msgs[i]) {
			e.noteLeftOut(&msgs[i])
			i++
			continue
		}
		j := i + 1
		for j < len(msgs) && (msgs[j].Role == msgs[i].Role || !carries(&msgs[j])) {
			if msgs[j].Role != msgs[i].Role {
				e.noteLeftOut(&msgs[j]) // the writers pass over it
			}
			j++
		}
		start := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		var wrote int
		var err *codec.Error
		if msgs[i].Role == codec.RoleAssistant {
			dst = append(dst, `{"role":"model","parts":[`...)
			dst, wrote = e.appendModelParts(dst, msgs[i:j])
		} else {
			dst = append(dst, `{"role":"user","parts":[`...)
			dst, wrote, err = e.appendUserParts(dst, msgs[i:j])
		}
		if err != nil {
			return dst, err
		}
		if wrote == 0 {
			dst = dst[:start] // nothing Gemini can take: no empty content
		} else {
			dst = append(dst, "]}"...)
			n++
		}
		i = j
	}
	if n == 0 {
		return dst, invalid("messages", "the conversation has no content that can be sent to Gemini")
	}
	return dst, nil
}

// carries reports whether m has a part its role's content takes.
func carries(m *codec.Message) bool {
	model := m.Role == codec.RoleAssistant
	for i := range m.Parts {
		if carried(&m.Parts[i], model) {
			return true
		}
	}
	return false
}

// carried reports whether p is written in a model content (model) or a
// user one: Gemini takes back only its own signed thoughts, no redacted
// thinking, calls only from the model and results only from the user, and
// no empty text.
func carried(p *codec.Part, model bool) bool {
	switch p.Kind {
	case codec.PartRedactedThinking:
		return false
	case codec.PartThinking:
		return model && p.SignedFor(codec.DialectGemini) != ""
	case codec.PartToolCall:
		return model
	case codec.PartToolResult:
		return !model
	case codec.PartText:
		return p.Text != "" || p.SignedFor(codec.DialectGemini) != ""
	}
	return true
}

// leaveOut notes what leaving out p, a part a content does not carry,
// drops.
func (e *requestEncoder) leaveOut(p *codec.Part, model bool) {
	switch {
	case p.Kind == codec.PartRedactedThinking && model:
		e.note(bitRedacted, NoteRedacted)
	case p.Kind == codec.PartToolResult && model, p.Kind == codec.PartToolCall && !model:
		e.note(bitMisplaced, NoteMisplacedPart)
	}
}

// noteLeftOut notes what a message left out of the contents drops.
func (e *requestEncoder) noteLeftOut(m *codec.Message) {
	for i := range m.Parts {
		p := &m.Parts[i]
		e.noteCache(p.CacheControl)
		e.leaveOut(p, m.Role == codec.RoleAssistant)
	}
}

// appendModelParts appends the parts of a model turn and records its calls.
func (e *requestEncoder) appendModelParts(dst []byte, group []codec.Message) ([]byte, int) {
	signed := false
	for mi := range group {
		if group[mi].Role != codec.RoleAssistant {
			continue
		}
		for pi := range group[mi].Parts {
			if p := &group[mi].Parts[pi]; p.Kind == codec.PartToolCall && callSignature(p) != "" {
				signed = true
			}
		}
	}
	e.lastFrom = e.ncalls
	n, firstCall := 0, true
	for mi := range group {
		if group[mi].Role != codec.RoleAssistant {
			continue // carries nothing: appendContents noted it
		}
		for pi := range group[mi].Parts {
			p := &group[mi].Parts[pi]
			e.noteCache(p.CacheControl)
			if !carried(p, true) {
				e.leaveOut(p, true)
				continue
			}
			switch p.Kind {
			case codec.PartToolCall:
				id, sig := DecodeCallID(p.ID)
				if s := p.SignedFor(codec.DialectGemini); s != "" {
					sig = s
				}
				if firstCall && !signed {
					sig = skipSignature
				}
				firstCall = false
				e.addCall(knownCall{canon: p.ID, id: id, name: p.Name})
				if p.Arguments != "" && !isJSONObject(p.Arguments) {
					e.note(bitBadArguments, NoteBadArguments)
				}
				dst = appendComma(dst, n)
				dst = appendCallPart(dst, sendableID(id), p.Name, p.Arguments, sig)
			case codec.PartThinking, codec.PartText:
				dst = appendTextPart(appendComma(dst, n), p.Text, p.Kind == codec.PartThinking, p.SignedFor(codec.DialectGemini))
			default:
				dst = appendMediaPart(appendComma(dst, n), p)
			}
			n++
		}
	}
	e.lastTo = e.ncalls
	return dst, n
}

// callSignature returns the thought signature of a tool call part that
// Gemini can verify: its own, or the one its id carries.
func callSignature(p *codec.Part) string {
	if s := p.SignedFor(codec.DialectGemini); s != "" {
		return s
	}
	_, sig := DecodeCallID(p.ID)
	return sig
}

// sendableID returns the id to send with a call or response: none for ids
// the gateway synthesised, which Gemini never saw.
func sendableID(id string) string {
	if isSynthesised(id) {
		return ""
	}
	return id
}

// appendUserParts appends the parts of a user turn: function responses in
// the order of the calls they answer, their media, then everything else.
func (e *requestEncoder) appendUserParts(dst []byte, group []codec.Message) ([]byte, int, *codec.Error) {
	var resBuf [16]*codec.Part
	var usedBuf [16]bool
	results, used := resBuf[:0], usedBuf[:0]
	for mi := range group {
		if group[mi].Role == codec.RoleAssistant {
			continue // carries nothing: appendContents noted it
		}
		for pi := range group[mi].Parts {
			if p := &group[mi].Parts[pi]; p.Kind == codec.PartToolResult {
				results, used = append(results, p), append(used, false)
			}
		}
	}
	n := 0
	for ci := e.lastFrom; ci < e.lastTo; ci++ {
		c := e.call(ci)
		for k, res := range results {
			if !used[k] && res.ID == c.canon {
				used[k] = true
				dst = appendFunctionResponse(appendComma(dst, n), res, c.id, c.name)
				n++
				break
			}
		}
	}
	for k, res := range results {
		if used[k] {
			continue
		}
		id, _ := DecodeCallID(res.ID)
		name := res.Name
		if c := e.findCall(res.ID); c != nil {
			id, name = c.id, c.name
		}
		if name == "" {
			return dst, 0, invalid("messages", "the tool result for call "+strconv.Quote(res.ID)+" answers no earlier tool call, so its function name is unknown")
		}
		dst = appendFunctionResponse(appendComma(dst, n), res, id, name)
		n++
	}
	for _, res := range results {
		for i := range res.Content {
			if p := &res.Content[i]; p.Kind != codec.PartText {
				dst = appendMediaPart(appendComma(dst, n), p)
				n++
			}
		}
	}
	for mi := range group {
		if group[mi].Role == codec.RoleAssistant {
			continue
		}
		for pi := range group[mi].Parts {
			p := &group[mi].Parts[pi]
			e.noteCache(p.CacheControl)
			switch {
			case p.Kind == codec.PartToolResult:
				continue // written first, above
			case !carried(p, false):
				e.leaveOut(p, false)
				continue
			case p.Kind == codec.PartText:
				dst = appendTextPart(appendComma(dst, n), p.Text, false, p.SignedFor(codec.DialectGemini))
			default:
				dst = appendMediaPart(appendComma(dst, n), p)
			}
			n++
		}
	}
	return dst, n, nil
}

// findCall returns the latest call written with the canonical id, or nil.
func (e *requestEncoder) findCall(canon string) *knownCall {
	for i := e.ncalls - 1; i >= 0; i-- {
		if c := e.call(i); c.canon == canon {
			return c
		}
	}
	return nil
}

func (e *requestEncoder) noteCache(cc string) {
	if cc != "" {
		e.note(bitCacheControl, NoteCacheControl)
	}
}

// appendFunctionResponse appends a functionResponse part. The response
// object is the result's text when that is a JSON object, else
// {"output": text}; an error result is {"error": text or object}. Texts are
// joined with newlines.
func appendFunctionResponse(dst []byte, res *codec.Part, id, name string) []byte {
	dst = append(dst, `{"functionResponse":{`...)
	if id = sendableID(id); id != "" {
		dst = append(dst, `"id":`...)
		dst = rawjson.AppendString(dst, id)
		dst = append(dst, ',')
	}
	dst = append(dst, `"name":`...)
	dst = rawjson.AppendString(dst, name)
	dst = append(dst, `,"response":`...)
	texts, only := 0, ""
	for i := range res.Content {
		if res.Content[i].Kind == codec.PartText {
			texts++
			only = res.Content[i].Text
		}
	}
	object := texts == 1 && isJSONObject(only)
	switch {
	case object && !res.IsError:
		dst = append(dst, trimSpace(rawjson.UnsafeBytes(only))...)
	case object:
		dst = append(dst, `{"error":`...)
		dst = append(dst, trimSpace(rawjson.UnsafeBytes(only))...)
		dst = append(dst, '}')
	default:
		if res.IsError {
			dst = append(dst, `{"error":"`...)
		} else {
			dst = append(dst, `{"output":"`...)
		}
		first := true
		for i := range res.Content {
			if p := &res.Content[i]; p.Kind == codec.PartText {
				if !first {
					dst = append(dst, `\n`...)
				}
				dst = rawjson.AppendEscaped(dst, p.Text)
				first = false
			}
		}
		dst = append(dst, `"}`...)
	}
	return append(dst, "}}"...)
}

func appendComma(dst []byte, n int) []byte {
	if n > 0 {
		return append(dst, ',')
	}
	return dst
}

// appendSystem appends the system prompt as systemInstruction.
func appendSystem(dst []byte, system []codec.Part) []byte {
	dst = append(dst, `,"systemInstruction":{"parts":[`...)
	n := 0
	for i := range system {
		if system[i].Text == "" {
			continue
		}
		dst = appendComma(dst, n)
		dst = append(dst, `{"text":`...)
		dst = rawjson.AppendString(dst, system[i].Text)
		dst = append(dst, '}')
		n++
	}
	if n == 0 {
		return dst[:len(dst)-len(`,"systemInstruction":{"parts":[`)]
	}
	return append(dst, "]}"...)
}

// appendTools appends the function declarations (parametersJsonSchema) and
// the function calling mode.
func (e *requestEncoder) appendTools(dst []byte, r *codec.Request) ([]byte, *codec.Error) {
	if len(r.Tools) == 0 {
		return dst, nil
	}
	dst = append(dst, `,"tools":[{"functionDeclarations":[`...)
	for i := range r.Tools {
		t := &r.Tools[i]
		dst = appendComma(dst, i)
		dst = append(dst, `{"name":`...)
		dst = rawjson.AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = rawjson.AppendString(dst, t.Description)
		}
		if !isEmptySchema(rawjson.UnsafeBytes(t.Parameters)) {
			dst = append(dst, `,"parametersJsonSchema":`...)
			var ok bool
			if dst, ok = appendSchema(dst, rawjson.UnsafeBytes(t.Parameters), toGemini); !ok {
				return dst, invalid("tools.parameters", "the parameters of tool "+strconv.Quote(t.Name)+" are not a valid JSON schema")
			}
		}
		dst = append(dst, '}')
		if t.Strict {
			e.note(bitStrict, NoteStrict)
		}
		e.noteCache(t.CacheControl)
	}
	dst = append(dst, "]}]"...)
	return e.appendToolConfig(dst, &r.Choice), nil
}

// appendToolConfig appends functionCallingConfig; auto is Gemini's default
// and is left out.
func (e *requestEncoder) appendToolConfig(dst []byte, c *codec.ToolChoice) []byte {
	if c.DisableParallel {
		e.note(bitDisableParallel, NoteDisableParallel)
	}
	switch c.Mode {
	case codec.ToolNone:
		return append(dst, `,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`...)
	case codec.ToolRequired:
		return append(dst, `,"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`...)
	case codec.ToolSpecific:
		dst = append(dst, `,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[`...)
		dst = rawjson.AppendString(dst, c.Name)
		return append(dst, "]}}"...)
	}
	return dst
}

// appendGenerationConfig appends the generationConfig object, or nothing
// when no setting is made.
func (e *requestEncoder) appendGenerationConfig(dst []byte, r *codec.Request) ([]byte, *codec.Error) {
	start := len(dst)
	dst = append(dst, `,"generationConfig":{`...)
	open := len(dst)
	member := func(name string) {
		if len(dst) > open {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	if r.MaxTokens > 0 {
		member("maxOutputTokens")
		dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	}
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"temperature", r.Temperature}, {"topP", r.TopP}} {
		switch {
		case f.v == nil:
		case math.IsNaN(*f.v) || math.IsInf(*f.v, 0):
			e.note(bitNotFinite, NoteNotFinite)
		default:
			member(f.name)
			dst = strconv.AppendFloat(dst, *f.v, 'g', -1, 64)
		}
	}
	if r.TopK != nil {
		member("topK")
		dst = strconv.AppendInt(dst, int64(*r.TopK), 10)
	}
	if len(r.Stop) > 0 {
		member("stopSequences")
		dst = append(dst, '[')
		for i, s := range r.Stop {
			dst = rawjson.AppendString(appendComma(dst, i), s)
		}
		dst = append(dst, ']')
	}
	if r.Seed != nil {
		member("seed") // an int32 at Gemini: a wider seed keeps its low 32 bits
		dst = strconv.AppendInt(dst, int64(int32(*r.Seed)), 10)
	}
	switch r.Format.Kind {
	case codec.FormatJSON:
		member("responseMimeType")
		dst = append(dst, `"application/json"`...)
	case codec.FormatJSONSchema:
		member("responseMimeType")
		dst = append(dst, `"application/json"`...)
		if r.Format.Schema != "" {
			member("responseJsonSchema")
			var ok bool
			if dst, ok = appendSchema(dst, rawjson.UnsafeBytes(r.Format.Schema), toGemini); !ok {
				return dst, invalid("response_format.schema", "the response schema is not valid JSON")
			}
		}
		if r.Format.Strict {
			e.note(bitFormatStrict, NoteFormatStrict)
		}
	}
	if budget, set := thinkingBudget(&r.Thinking, r.MaxTokens); set || r.Thinking.Show {
		member("thinkingConfig")
		dst = append(dst, '{')
		if r.Thinking.Show && budget != 0 {
			dst = append(dst, `"includeThoughts":true`...)
		}
		if set {
			if r.Thinking.Show && budget != 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `"thinkingBudget":`...)
			dst = strconv.AppendInt(dst, int64(budget), 10)
		}
		dst = append(dst, '}')
	}
	if len(dst) == open {
		return dst[:start], nil
	}
	return append(dst, '}'), nil
}

// thinkingBudget returns the thinkingBudget for the canonical thinking
// settings: the budget itself; for an effort, the budgets Google's own
// OpenAI-compatible endpoint uses (low 1K, medium 8K, high 24K; none turns
// thinking off), but at most half of maxTokens when that is set: Gemini
// counts thoughts against maxOutputTokens, and an effort's budget must
// not leave the answer no room; -1 (the model decides) when thinking is on
// with neither. set is false when the request says nothing about thinking.
func thinkingBudget(t *codec.Thinking, maxTokens int) (budget int, set bool) {
	switch {
	case t.Effort == "none":
		return 0, true
	case !t.Enabled:
		return 0, false
	case t.Budget > 0:
		return t.Budget, true
	}
	switch t.Effort {
	case "minimal", "low":
		budget = 1024
	case "medium":
		budget = 8192
	case "high", "xhigh", "max":
		budget = 24576
	default:
		return -1, true
	}
	if maxTokens > 0 {
		budget = min(budget, maxTokens/2)
	}
	return budget, true
}
