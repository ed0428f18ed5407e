package gemini

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// DecodeRequest reads a generateContent request body into r, which it resets
// first; the caller then sets r.Model and r.Stream from the URL. Fields are
// accepted under their camelCase and snake_case names, as Gemini does.
// Strings in r point into body. An error is a 400 naming the offending
// field.
func DecodeRequest(body []byte, r *codec.Request) *codec.Error {
	r.Reset()
	d := requestDecoder{r: r, p: parser{b: body}, sd: strDecoder{capHint: len(body)}}
	p := &d.p
	if p.peek() != '{' {
		return invalid("", "Invalid JSON payload received: want a JSON object")
	}
	var kb [40]byte
	contents := false
	l, _ := p.object()
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		var err *codec.Error
		switch string(fold(&kb, k)) {
		case "contents":
			contents = true
			err = d.contents()
		case "systeminstruction":
			err = d.system()
		case "tools":
			err = d.tools()
		case "toolconfig":
			err = d.toolConfig()
		case "generationconfig":
			err = d.generationConfig()
		case "cachedcontent":
			// The cached prompt lives at Google; no other upstream can read it.
			if s, _ := p.str(&d.sd); s != "" {
				err = invalid("cachedContent", "cachedContent cannot be translated for this model: send the content itself")
			}
		default:
			p.skip()
		}
		if err != nil {
			return err
		}
	}
	switch {
	case !p.end():
		return invalid("", "Invalid JSON payload received")
	case !contents || d.contentCount == 0:
		return invalid("contents", "* GenerateContentRequest.contents: contents is not specified")
	case len(r.Messages) == 0:
		return invalid("contents", "contents hold no part that can be translated")
	}
	return nil
}

// requestDecoder carries the state of one DecodeRequest.
type requestDecoder struct {
	r  *codec.Request
	p  parser
	sd strDecoder
	// pending are the function calls of the latest model turn, for pairing
	// the responses that follow.
	pending      pendingCalls
	calls        int          // id-less calls so far, for synthesised ids
	orphans      int          // responses that answer no call
	contentCount int          // contents read
	arena        []codec.Part // tool result contents are carved from it
	part         wirePart
}

// pendingCall is a function call of the latest model turn, waiting for its
// response.
type pendingCall struct {
	id, name string
	answered bool
}

// pendingCalls is a list of calls whose first ones live in an array, so
// that the decoder stays on the stack.
type pendingCalls struct {
	buf  [16]pendingCall
	more []pendingCall
	n    int
}

func (pc *pendingCalls) at(i int) *pendingCall {
	if i < len(pc.buf) {
		return &pc.buf[i]
	}
	return &pc.more[i-len(pc.buf)]
}

func (pc *pendingCalls) add(c pendingCall) {
	if pc.n < len(pc.buf) {
		pc.buf[pc.n] = c
	} else {
		pc.more = append(pc.more[:pc.n-len(pc.buf)], c)
	}
	pc.n++
}

// keepFrom drops the calls before the first-th.
func (pc *pendingCalls) keepFrom(first int) {
	for i := first; i < pc.n; i++ {
		*pc.at(i - first) = *pc.at(i)
	}
	pc.n -= first
}

// answer returns the id of the first unanswered call of the function name,
// marking it answered, or "".
func (pc *pendingCalls) answer(name string) string {
	for i := range pc.n {
		if c := pc.at(i); !c.answered && c.name == name {
			c.answered = true
			return c.id
		}
	}
	return ""
}

// answerID marks the call with the given id answered.
func (pc *pendingCalls) answerID(id string) {
	for i := range pc.n {
		if c := pc.at(i); c.id == id {
			c.answered = true
			return
		}
	}
}

// syntaxError is the 400 for malformed JSON, or a value of the wrong kind
// at field.
func (d *requestDecoder) syntaxError(field string) *codec.Error { return syntaxError(&d.p, field) }

// syntaxError is the 400 for what p failed to read: malformed JSON, or a
// value of the wrong kind at field.
func syntaxError(p *parser, field string) *codec.Error {
	if p.err {
		return invalid("", "Invalid JSON payload received")
	}
	return invalid(field, "Invalid value at '"+field+"'")
}

// system reads systemInstruction: its text parts.
func (d *requestDecoder) system() *codec.Error {
	p := &d.p
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return d.syntaxError("systemInstruction")
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "parts" {
			p.skip()
			continue
		}
		parts := p.array()
		for p.elem(&parts) {
			if field, ok := parsePart(p, &d.part, &d.sd); !ok {
				return d.syntaxError("systemInstruction." + field)
			}
			if d.part.Text != "" {
				d.r.System = append(d.r.System, codec.Part{Kind: codec.PartText, Text: d.part.Text})
			}
		}
	}
	if p.err {
		return d.syntaxError("systemInstruction")
	}
	return nil
}

// contents turns contents into canonical messages, giving every function
// call an id and every function response the id of its call.
func (d *requestDecoder) contents() *codec.Error {
	p := &d.p
	list := p.array()
	for p.elem(&list) {
		d.contentCount++
		if err := d.content(); err != nil {
			return err
		}
	}
	if p.err {
		return d.syntaxError("contents")
	}
	return nil
}

// content reads one Content into a message (none if nothing in it can be
// carried). Its role may follow its parts (Gemini's own output puts it
// last), so the parts are read first as a user's and fixed up after.
func (d *requestDecoder) content() *codec.Error {
	p := &d.p
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return d.syntaxError("contents")
	}
	m := nextMessage(d.r, codec.RoleUser)
	msg := len(d.r.Messages) - 1
	firstCall := d.pending.n
	role := ""
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "role":
			if role, ok = p.str(&d.sd); !ok {
				return d.syntaxError("contents.role")
			}
		case "parts":
			parts := p.array()
			for p.elem(&parts) {
				field, ok := parsePart(p, &d.part, &d.sd)
				if !ok {
					return d.syntaxError("contents." + field)
				}
				if err := d.addPart(m, &d.part); err != nil {
					return err
				}
			}
		default:
			p.skip()
		}
	}
	if p.err {
		return d.syntaxError("contents")
	}
	switch role {
	case "user", "", "function":
	case "model":
		m.Role = codec.RoleAssistant
		// A model turn starts a new set of calls to answer. One with
		// nothing to carry is dropped below, and pairs as if it were not
		// there: so does the request the encoder makes of it.
		if len(m.Parts) > 0 {
			d.pending.keepFrom(firstCall)
		}
	default:
		return invalid("contents.role", "Please use a valid role: user, model.")
	}
	if len(m.Parts) == 0 {
		d.r.Messages = d.r.Messages[:msg] // only parts no other dialect has
	}
	return nil
}

// addPart appends the canonical form of w to m.
func (d *requestDecoder) addPart(m *codec.Message, w *wirePart) *codec.Error {
	if w.ThoughtSignature == skipSignature {
		w.ThoughtSignature = "" // the encoder's stand-in, not a signature
	}
	var origin string // of the signature, when there is one
	if w.ThoughtSignature != "" {
		w.ThoughtSignature, origin = codec.SplitSignature(w.ThoughtSignature, codec.DialectGemini)
	}
	switch {
	case w.FunctionCall.Name != "":
		fc := &w.FunctionCall
		id := fc.ID
		if id == "" {
			id = requestSynthID(d.calls, false)
			d.calls++
		}
		d.pending.add(pendingCall{id: id, name: fc.Name})
		m.Parts = append(m.Parts, codec.Part{Kind: codec.PartToolCall, ID: id, Name: fc.Name,
			Arguments: arguments(fc.Args), Signature: w.ThoughtSignature, SigOrigin: origin})
	case w.FunctionResponse.Name != "":
		fr := &w.FunctionResponse
		id := fr.ID
		if id == "" {
			id = d.pending.answer(fr.Name)
		} else {
			d.pending.answerID(id)
		}
		if id == "" {
			id = requestSynthID(d.orphans, true)
			d.orphans++
		}
		part, err := d.functionResponse(fr, id)
		if err != nil {
			return err
		}
		m.Parts = append(m.Parts, part)
	default:
		part, ok := decodeDataPart(w)
		if !ok {
			break
		}
		if part.Signature != "" {
			part.SigOrigin = origin
		}
		if n := len(m.Parts); n > 0 && part.Kind == codec.PartThinking && m.Parts[n-1].Kind == codec.PartThinking && m.Parts[n-1].Signature == "" {
			// One thinking block streamed as several thought parts (the
			// signature, as Anthropic sends it, comes last): one part again.
			prev := &m.Parts[n-1]
			prev.Text += part.Text
			prev.Signature, prev.SigOrigin = part.Signature, part.SigOrigin
			break
		}
		m.Parts = append(m.Parts, part)
	}
	return nil
}

// nextMessage appends a message with the given role to r, reusing the parts
// capacity that Reset kept.
func nextMessage(r *codec.Request, role codec.Role) *codec.Message {
	if n := len(r.Messages); n < cap(r.Messages) {
		r.Messages = r.Messages[:n+1]
		m := &r.Messages[n]
		m.Role, m.Parts = role, m.Parts[:0]
		return m
	}
	r.Messages = append(r.Messages, codec.Message{Role: role})
	return &r.Messages[len(r.Messages)-1]
}

// requestSynthID names a call without an id in a request's history
// "gcall_h<n>", n counting such calls from the start of the conversation (so
// the id of a call stays the same in every later turn, and when contents
// are merged); a response that answers no call the history shows gets
// "gcall_r<n>".
func requestSynthID(n int, orphan bool) string {
	var buf [32]byte
	b := append(buf[:0], synthPrefix...)
	if orphan {
		b = append(b, 'r')
	} else {
		b = append(b, 'h')
	}
	return string(strconv.AppendInt(b, int64(n), 10))
}

// functionResponse turns a functionResponse into a tool result whose content
// is carved from the arena. The response object maps to text thus:
// {"output": "<text>"} gives the text, {"error": <x>} an error result with x
// as text (a string's contents, else its JSON), anything else its JSON text.
// Media in its parts follow the text.
func (d *requestDecoder) functionResponse(fr *wireFunctionResponse, id string) (codec.Part, *codec.Error) {
	part := codec.Part{Kind: codec.PartToolResult, ID: id, Name: fr.Name}
	text, isErr := responseText(fr.Response, &d.sd)
	part.IsError = isErr
	start := len(d.arena)
	if text != "" || len(fr.Media) == 0 {
		d.arena = append(d.arena, codec.Part{Kind: codec.PartText, Text: text})
	}
	for i := range fr.Media {
		if media, ok := mediaPart(&fr.Media[i].Blob, &fr.Media[i].File); ok {
			d.arena = append(d.arena, media)
		}
	}
	part.Content = d.arena[start:len(d.arena):len(d.arena)]
	return part, nil
}

// responseText reads a functionResponse.response object (validated, or
// nil) as a tool result's text.
func responseText(resp []byte, sd *strDecoder) (text string, isErr bool) {
	if len(resp) == 0 {
		return "", false
	}
	it := members{b: resp}
	key, val, more, _ := it.next()
	if !more {
		return rawString(resp), false // {}
	}
	if _, _, more2, _ := it.next(); more2 || (string(key) != "output" && string(key) != "error") {
		return rawString(resp), false
	}
	isErr = string(key) == "error"
	if val[0] == '"' {
		p := parser{b: val}
		s, _ := p.str(sd)
		return s, isErr
	}
	if isErr {
		return rawString(val), true
	}
	return rawString(resp), false // {"output": <not a string>}
}

// decodeDataPart reads a part that is neither a call nor a response. ok is
// false for parts with nothing to carry (empty, or server-side tool
// traffic, which is dropped).
func decodeDataPart(p *wirePart) (codec.Part, bool) {
	sig := p.ThoughtSignature
	if media, ok := mediaPart(&p.InlineData, &p.FileData); ok {
		media.Signature = sig
		return media, true
	}
	if p.Thought {
		if data, ok := strings.CutPrefix(sig, redactedPrefix); ok {
			return codec.Part{Kind: codec.PartRedactedThinking, Data: data}, true
		}
		if p.Text == "" && sig == "" {
			return codec.Part{}, false
		}
		return codec.Part{Kind: codec.PartThinking, Text: p.Text, Signature: sig}, true
	}
	if p.Text == "" && sig == "" {
		return codec.Part{}, false
	}
	// A signature may sit on an empty text part (Gemini 3 ends answers so):
	// it stays a part of its own, so that it goes back where it came from.
	return codec.Part{Kind: codec.PartText, Text: p.Text, Signature: sig}, true
}

// mediaPart reads inline or referenced data: an image for image/* types, a
// document otherwise.
func mediaPart(blob *wireBlob, file *wireFileData) (codec.Part, bool) {
	var p codec.Part
	switch {
	case blob.Data != "" || blob.MimeType != "":
		p = codec.Part{MediaType: blob.MimeType, Data: blob.Data}
	case file.FileURI != "":
		p = codec.Part{MediaType: file.MimeType, URL: file.FileURI}
	default:
		return p, false
	}
	p.Kind = codec.PartDocument
	if strings.HasPrefix(p.MediaType, "image/") {
		p.Kind = codec.PartImage
	}
	return p, true
}

// tools reads function declarations. Gemini's server-side tools
// (googleSearch, codeExecution, urlContext, …) have no equivalent anywhere
// else and are refused.
func (d *requestDecoder) tools() *codec.Error {
	p := &d.p
	var kb [40]byte
	list := p.array()
	for p.elem(&list) {
		l, ok := p.object()
		if !ok {
			return d.syntaxError("tools")
		}
		for k, more := p.key(&l); more; k, more = p.key(&l) {
			switch string(fold(&kb, k)) {
			case "functiondeclarations":
				if err := d.functionDeclarations(); err != nil {
					return err
				}
			case "googlesearch", "googlesearchretrieval", "codeexecution", "urlcontext", "googlemaps",
				"filesearch", "computeruse", "retrieval", "enterprisewebsearch":
				if p.raw() != nil {
					name := strings.Clone(rawjson.UnsafeString(k))
					return invalid("tools."+name, "the "+name+" tool is available on Gemini models only")
				}
			default:
				p.skip()
			}
		}
	}
	if p.err {
		return d.syntaxError("tools")
	}
	return nil
}

// functionDeclarations reads the declarations of one tool.
func (d *requestDecoder) functionDeclarations() *codec.Error {
	p := &d.p
	var kb [40]byte
	list := p.array()
	for p.elem(&list) {
		var tool codec.Tool
		var params, jsonSchema []byte
		l, ok := p.object()
		if !ok {
			return d.syntaxError("tools.functionDeclarations")
		}
		for k, more := p.key(&l); more; k, more = p.key(&l) {
			switch string(fold(&kb, k)) {
			case "name":
				tool.Name, ok = p.str(&d.sd)
			case "description":
				tool.Description, ok = p.str(&d.sd)
			case "parameters":
				params = p.raw()
			case "parametersjsonschema":
				jsonSchema = p.raw()
			default:
				p.skip()
			}
			if !ok {
				return d.syntaxError("tools.functionDeclarations")
			}
		}
		if p.err {
			return d.syntaxError("tools.functionDeclarations")
		}
		if tool.Name == "" {
			return invalid("tools.functionDeclarations.name", "* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.")
		}
		switch {
		case params != nil && jsonSchema != nil:
			return invalid("tools.functionDeclarations.parameters", "parameters and parametersJsonSchema are mutually exclusive")
		case jsonSchema != nil:
			tool.Parameters = rawString(jsonSchema)
		case params != nil:
			s, ok := appendSchema(make([]byte, 0, len(params)+32), params, fromOpenAPI)
			if !ok {
				return invalid("tools.functionDeclarations.parameters", "parameters is not a valid schema")
			}
			tool.Parameters = rawjson.UnsafeString(s)
		}
		d.r.Tools = append(d.r.Tools, tool)
	}
	return nil
}

// toolConfig reads functionCallingConfig. ANY with exactly one allowed name
// is a specific tool; with several, any tool (the restriction is lost);
// VALIDATED is auto (the constraint is Gemini's own).
func (d *requestDecoder) toolConfig() *codec.Error {
	p := &d.p
	var kb [40]byte
	var mode, only string
	names := 0
	l, ok := p.object()
	for k, more := p.key(&l); more && ok; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "functioncallingconfig" {
			p.skip()
			continue
		}
		fl, isObj := p.object()
		ok = isObj
		for fk, fmore := p.key(&fl); fmore && ok; fk, fmore = p.key(&fl) {
			switch string(fold(&kb, fk)) {
			case "mode":
				mode, ok = p.str(&d.sd)
			case "allowedfunctionnames":
				list := p.array()
				for p.elem(&list) && ok {
					only, ok = p.str(&d.sd)
					names++
				}
			default:
				p.skip()
			}
		}
	}
	if !ok || p.err {
		return d.syntaxError("toolConfig")
	}
	r := d.r
	switch mode {
	case "", "AUTO", "MODE_UNSPECIFIED", "VALIDATED":
		r.Choice.Mode = codec.ToolAuto
	case "NONE":
		r.Choice.Mode = codec.ToolNone
	case "ANY":
		r.Choice.Mode = codec.ToolRequired
		if names == 1 {
			r.Choice = codec.ToolChoice{Mode: codec.ToolSpecific, Name: only}
		}
	default:
		return invalid("toolConfig.functionCallingConfig.mode", "Invalid value at 'tool_config.function_calling_config.mode': "+strings.Clone(mode))
	}
	return nil
}

// genConfig is what generationConfig says, before it becomes canonical.
type genConfig struct {
	responseMimeType   string
	responseSchema     []byte
	responseJSONSchema []byte
	includeThoughts    bool
	thinkingBudget     *int
	thinkingLevel      string
}

// generationConfig reads the sampling, output and thinking settings.
func (d *requestDecoder) generationConfig() *codec.Error {
	p := &d.p
	var g genConfig
	var kb [40]byte
	r := d.r
	l, ok := p.object()
	if !ok {
		return d.syntaxError("generationConfig")
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		name := fold(&kb, k)
		switch string(name) {
		case "maxoutputtokens":
			r.MaxTokens, ok = p.int()
		case "temperature":
			r.Temperature, ok = floatPtr(p)
		case "topp":
			r.TopP, ok = floatPtr(p)
		case "topk":
			var f *float64
			if f, ok = floatPtr(p); f != nil {
				k := int(*f)
				r.TopK = &k
			}
		case "seed":
			var n int
			if n, ok = p.int(); ok {
				s := int64(n)
				r.Seed = &s
			}
		case "stopsequences":
			list := p.array()
			for p.elem(&list) && ok {
				var s string
				s, ok = p.str(&d.sd)
				r.Stop = append(r.Stop, s)
			}
		case "candidatecount":
			var n int
			if n, ok = p.int(); ok && n > 1 {
				return invalid("generationConfig.candidateCount", "candidateCount greater than 1 is not supported by this gateway")
			}
		case "responsemimetype":
			g.responseMimeType, ok = p.str(&d.sd)
		case "responseschema":
			g.responseSchema = p.raw()
		case "responsejsonschema", "responsejsonschemaordered":
			g.responseJSONSchema = p.raw()
		case "thinkingconfig":
			ok = d.thinkingConfig(&g)
		default:
			p.skip()
		}
		if !ok || p.err {
			return d.syntaxError("generationConfig." + strings.Clone(rawjson.UnsafeString(k)))
		}
	}
	if err := decodeFormat(&g, r); err != nil {
		return err
	}
	return decodeThinking(&g, r)
}

// floatPtr reads a number value into a new float64 (nil for null).
func floatPtr(p *parser) (*float64, bool) {
	if p.null() {
		return nil, true
	}
	f, ok := p.float()
	if !ok {
		return nil, false
	}
	return &f, true
}

// thinkingConfig reads thinkingConfig into g.
func (d *requestDecoder) thinkingConfig(g *genConfig) bool {
	p := &d.p
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "includethoughts":
			g.includeThoughts, ok = p.bool()
		case "thinkingbudget":
			if !p.null() {
				var n int
				n, ok = p.int()
				g.thinkingBudget = &n
			}
		case "thinkinglevel":
			g.thinkingLevel, ok = p.str(&d.sd)
		default:
			p.skip()
		}
		if !ok {
			return false
		}
	}
	return !p.err
}

// decodeFormat reads responseMimeType and the response schema.
func decodeFormat(g *genConfig, r *codec.Request) *codec.Error {
	schema, jsonSchema := g.responseSchema, g.responseJSONSchema
	switch g.responseMimeType {
	case "", "text/plain":
		if schema != nil || jsonSchema != nil {
			return invalid("generationConfig.responseMimeType", "responseSchema needs responseMimeType application/json")
		}
		return nil
	case "application/json":
	default:
		return invalid("generationConfig.responseMimeType", "responseMimeType "+g.responseMimeType+" cannot be translated for this model")
	}
	switch {
	case schema != nil && jsonSchema != nil:
		return invalid("generationConfig.responseSchema", "responseSchema and responseJsonSchema are mutually exclusive")
	case jsonSchema != nil:
		r.Format = codec.ResponseFormat{Kind: codec.FormatJSONSchema, Schema: rawString(jsonSchema)}
	case schema != nil:
		s, ok := appendSchema(make([]byte, 0, len(schema)+32), schema, fromOpenAPI)
		if !ok {
			return invalid("generationConfig.responseSchema", "responseSchema is not a valid schema")
		}
		r.Format = codec.ResponseFormat{Kind: codec.FormatJSONSchema, Schema: rawjson.UnsafeString(s)}
	default:
		r.Format.Kind = codec.FormatJSON
	}
	return nil
}

// decodeThinking reads thinkingConfig: a budget of 0 turns thinking off
// (effort "none"), -1 leaves the amount to the model, a level becomes an
// effort.
func decodeThinking(g *genConfig, r *codec.Request) *codec.Error {
	level := g.thinkingLevel
	if level == "THINKING_LEVEL_UNSPECIFIED" {
		level = ""
	}
	if g.thinkingBudget != nil && level != "" {
		return invalid("generationConfig.thinkingConfig", "thinkingBudget and thinkingLevel are mutually exclusive")
	}
	t := &r.Thinking
	switch {
	case g.thinkingBudget != nil:
		switch b := *g.thinkingBudget; {
		case b == 0:
			t.Effort = "none" // thinking off, as OpenAI's effort says it
			return nil
		case b == -1:
			t.Enabled = true
		case b > 0:
			t.Enabled, t.Budget = true, b
		default:
			return invalid("generationConfig.thinkingConfig.thinkingBudget", "thinkingBudget must be -1, 0 or positive")
		}
	case level != "":
		effort := thinkingEffort(level)
		if effort == "" {
			return invalid("generationConfig.thinkingConfig.thinkingLevel", "Invalid value at 'generation_config.thinking_config.thinking_level': "+level)
		}
		t.Enabled, t.Effort = true, effort
	}
	if g.includeThoughts {
		t.Enabled, t.Show = true, true
	}
	return nil
}

// thinkingEffort maps Gemini 3's thinking levels to efforts.
func thinkingEffort(level string) string {
	switch level {
	case "MINIMAL":
		return "minimal"
	case "LOW":
		return "low"
	case "MEDIUM":
		return "medium"
	case "HIGH":
		return "high"
	}
	return ""
}

func invalid(param, msg string) *codec.Error {
	return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: param, Message: msg}
}
