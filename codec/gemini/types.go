package gemini

// The wire structs: what the decoders read of Gemini's JSON, filled by the
// walkers below with a parser (see parse.go). Raw members (function
// arguments, responses) are validated spans of the input, and strings point
// into the input or a strDecoder's buffer: everything decoded is valid only
// as long as those are, and the input must not change meanwhile.

import "github.com/rosetta-gateway/rosetta/codec/rawjson"

// wirePart is a Part. Exactly one data member is meant to be set; the
// thought flag and thoughtSignature may accompany any of them.
type wirePart struct {
	Text             string
	Thought          bool
	ThoughtSignature string
	InlineData       wireBlob
	FileData         wireFileData
	FunctionCall     wireFunctionCall
	FunctionResponse wireFunctionResponse
	// ServerSide is set for the traffic of Gemini's server-side tools
	// (executableCode, codeExecutionResult, toolCall, toolResponse), which
	// no other dialect can carry.
	ServerSide bool
}

// wireBlob is inline data: base64 bytes and their media type.
type wireBlob struct {
	MimeType string
	Data     string
}

// wireFileData is data by reference: a Files API, GCS or HTTPS URI.
type wireFileData struct {
	MimeType string
	FileURI  string
}

// wireFunctionCall is a FunctionCall. Args is a JSON object, or nil.
type wireFunctionCall struct {
	ID   string
	Name string
	Args []byte
}

// wireFunctionResponse is a FunctionResponse: the result of a call, by
// function name (and id, when the call had one). Media holds the media of
// its parts (FunctionResponsePart), in order.
type wireFunctionResponse struct {
	ID       string
	Name     string
	Response []byte
	Media    []wireMedia
}

// wireMedia is inline or referenced data.
type wireMedia struct {
	Blob wireBlob
	File wireFileData
}

// wireUsage is a UsageMetadata. In streams every chunk carries the
// cumulative counts so far.
type wireUsage struct {
	PromptTokenCount        int
	CandidatesTokenCount    int
	CachedContentTokenCount int
	ThoughtsTokenCount      int
	ToolUsePromptTokenCount int
	// again: a count is named twice or with escapes, which readers that
	// take the first of a repeated key read otherwise.
	again bool
}

// parsePart reads one Part into w (which it resets), leaving the cursor
// after it. field names the member whose value has the wrong kind.
func parsePart(p *parser, w *wirePart, sd *strDecoder) (field string, ok bool) {
	*w = wirePart{}
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return "parts", false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "text":
			w.Text, ok = p.str(sd)
			field = "parts.text"
		case "thought":
			w.Thought, ok = p.bool()
			field = "parts.thought"
		case "thoughtsignature":
			w.ThoughtSignature, ok = p.str(sd)
			w.ThoughtSignature = unwrapSignature(w.ThoughtSignature)
			field = "parts.thoughtSignature"
		case "inlinedata":
			ok = parseMedia(p, &w.InlineData.MimeType, &w.InlineData.Data, "data", sd)
			field = "parts.inlineData"
		case "filedata":
			ok = parseMedia(p, &w.FileData.MimeType, &w.FileData.FileURI, "fileuri", sd)
			field = "parts.fileData"
		case "functioncall":
			ok = parseFunctionCall(p, &w.FunctionCall, sd)
			field = "parts.functionCall"
		case "functionresponse":
			ok = parseFunctionResponse(p, &w.FunctionResponse, sd)
			field = "parts.functionResponse"
		case "executablecode", "codeexecutionresult", "toolcall", "toolresponse":
			w.ServerSide = w.ServerSide || p.raw() != nil
		default:
			p.skip()
		}
		if !ok {
			return field, false
		}
	}
	return "parts", !p.err
}

// parseMedia reads a Blob or FileData: its mimeType, and the member named
// dataKey (folded) into data.
func parseMedia(p *parser, mimeType, data *string, dataKey string, sd *strDecoder) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch key := string(fold(&kb, k)); {
		case key == "mimetype":
			*mimeType, ok = p.str(sd)
		case key == dataKey:
			*data, ok = p.str(sd)
		default:
			p.skip()
		}
		if !ok {
			return false
		}
	}
	return !p.err
}

// parseFunctionCall reads a FunctionCall.
func parseFunctionCall(p *parser, fc *wireFunctionCall, sd *strDecoder) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "id":
			fc.ID, ok = p.str(sd)
		case "name":
			fc.Name, ok = p.str(sd)
		case "args":
			ok = p.peek() == '{' || p.peek() == 'n'
			fc.Args = p.raw()
		default:
			p.skip()
		}
		if !ok {
			return false
		}
	}
	return !p.err
}

// parseFunctionResponse reads a FunctionResponse.
func parseFunctionResponse(p *parser, fr *wireFunctionResponse, sd *strDecoder) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "id":
			fr.ID, ok = p.str(sd)
		case "name":
			fr.Name, ok = p.str(sd)
		case "response":
			ok = p.peek() == '{' || p.peek() == 'n'
			fr.Response = p.raw()
		case "parts":
			ok = parseResponseMedia(p, fr, sd)
		default:
			p.skip()
		}
		if !ok {
			return false
		}
	}
	return !p.err
}

// parseResponseMedia reads FunctionResponseParts: inline or referenced
// media.
func parseResponseMedia(p *parser, fr *wireFunctionResponse, sd *strDecoder) bool {
	var kb [40]byte
	parts := p.array()
	for p.elem(&parts) {
		var m wireMedia
		l, ok := p.object()
		if !ok {
			return false
		}
		for k, more := p.key(&l); more; k, more = p.key(&l) {
			switch string(fold(&kb, k)) {
			case "inlinedata":
				ok = parseMedia(p, &m.Blob.MimeType, &m.Blob.Data, "data", sd)
			case "filedata":
				ok = parseMedia(p, &m.File.MimeType, &m.File.FileURI, "fileuri", sd)
			default:
				p.skip()
			}
			if !ok {
				return false
			}
		}
		fr.Media = append(fr.Media, m)
	}
	return !p.err
}

// parseUsage reads a UsageMetadata into u, which it resets: a repeated
// usageMetadata counts as its last occurrence, whole, as a client's JSON
// parser reads it, and so does a repeated count, whose error is that of
// its last occurrence alone.
func parseUsage(p *parser, u *wireUsage) bool {
	*u = wireUsage{}
	l, ok := p.object()
	if !ok {
		return false
	}
	var bad, seen uint8 // a bit per count whose last occurrence is no count, per count read
	var keys rawjson.KeySet
	start := p.i - 1 // the object's '{', when it is one
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		var n *int
		var bit uint8
		name := decodedKey(k)
		if len(name) == len(k) {
			keys.Add(k)
		}
		switch string(name) { // as the SDKs name them (see readChunk)
		case "promptTokenCount":
			n, bit = &u.PromptTokenCount, 1
		case "candidatesTokenCount":
			n, bit = &u.CandidatesTokenCount, 2
		case "cachedContentTokenCount":
			n, bit = &u.CachedContentTokenCount, 4
		case "thoughtsTokenCount":
			n, bit = &u.ThoughtsTokenCount, 8
		case "toolUsePromptTokenCount":
			n, bit = &u.ToolUsePromptTokenCount, 16
		default:
			p.skip()
			continue
		}
		u.again = u.again || seen&bit != 0 || len(name) != len(k) // twice, or with escapes
		seen |= bit
		if p.peek() == 'n' { // null: no count, as the SDKs read it
			*n, ok = 0, p.null()
		} else {
			*n, ok = p.int()
			// A negative count is no count, as readCount reads it, nor
			// is one past maxCount: two summed (decodeUsage) would wrap
			// to a negative one.
			ok = ok && *n >= 0 && *n <= maxCount
		}
		if ok {
			bad &^= bit
		} else {
			bad |= bit
		}
	}
	// Any other key named twice or with escapes: a first-wins reader
	// reads another usage, which the relay must rewrite.
	u.again = u.again || !p.err && keys.Repeats(p.b[start:p.i])
	return !p.err && bad == 0
}

// maxCount is the largest count parseUsage reads: the largest integer a
// float64 holds exactly (what parser.int reads of a count written as a
// float), far past any real count, and the sum of two of which is an int.
const maxCount = 1 << 53

// wireChunk is what the response decoders read of a GenerateContentResponse
// (a whole answer or one stream chunk) besides the parts of its first
// candidate, which readChunk hands over one by one as it reads them.
type wireChunk struct {
	Candidate    bool // there is a candidate
	FinishReason string
	BlockReason  string // promptFeedback.blockReason
	Usage        wireUsage
	HasUsage     bool
	ModelVersion string
	ResponseID   string
	Error        []byte // an error object sent in a stream
}

// readChunk reads a GenerateContentResponse into c (which it resets),
// calling onPart for each part of the first candidate as it is read (w is
// reused). It returns false on malformed input.
func readChunk(p *parser, c *wireChunk, w *wirePart, sd *strDecoder, onPart func(*wirePart)) bool {
	*c = wireChunk{}
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "candidates":
			ok = readCandidates(p, c, w, sd, onPart)
		case "promptfeedback":
			ok = readFolded(p, "blockreason", &c.BlockReason, sd)
		case "usagemetadata", "modelversion":
			ok = readNamed(p, c, k, sd)
		case "responseid":
			c.ResponseID, ok = p.str(sd)
		case "error":
			c.Error = p.raw()
		default:
			p.skip()
		}
		if !ok {
			return false
		}
	}
	return p.end()
}

// readNamed reads the usage or the model of a response, under the key k
// that folds to their names, into c. Unlike the rest of a response (and
// of a request, which Gemini's protobuf JSON parser accepts in either
// spelling), these are read only under the keys the SDKs read them by, so
// that the gateway bills and the relay renames what clients read: genai's
// Go converter and the JavaScript SDK look modelVersion and usageMetadata
// up by those exact names, and the counts by their camelCase names
// (parseUsage); a snake_case spelling is passed over as they pass it over.
func readNamed(p *parser, c *wireChunk, k []byte, sd *strDecoder) (ok bool) {
	switch string(decodedKey(k)) {
	case "usageMetadata":
		c.HasUsage = p.peek() != 'n'
		return parseUsage(p, &c.Usage)
	case "modelVersion":
		c.ModelVersion, ok = p.str(sd)
		return ok
	}
	p.skip()
	return !p.err
}

// readCandidates reads the first candidate (its parts and finishReason)
// and skips the others.
func readCandidates(p *parser, c *wireChunk, w *wirePart, sd *strDecoder, onPart func(*wirePart)) bool {
	var kb [40]byte
	cands := p.array()
	for p.elem(&cands) {
		if c.Candidate {
			p.skip()
			continue
		}
		c.Candidate = true
		l, ok := p.object()
		if !ok {
			return false
		}
		for k, more := p.key(&l); more; k, more = p.key(&l) {
			switch string(fold(&kb, k)) {
			case "content":
				ok = readContentParts(p, w, sd, onPart)
			case "finishreason":
				c.FinishReason, ok = p.str(sd)
			default:
				p.skip()
			}
			if !ok {
				return false
			}
		}
	}
	return !p.err
}

// readContentParts reads a Content, calling onPart for each part.
func readContentParts(p *parser, w *wirePart, sd *strDecoder, onPart func(*wirePart)) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "parts" {
			p.skip()
			continue
		}
		parts := p.array()
		for p.elem(&parts) {
			if _, ok := parsePart(p, w, sd); !ok {
				return false
			}
			onPart(w)
		}
	}
	return !p.err
}

// readFolded reads an object, keeping the string member whose folded name
// is key.
func readFolded(p *parser, key string, dst *string, sd *strDecoder) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) == key {
			if *dst, ok = p.str(sd); !ok {
				return false
			}
			continue
		}
		p.skip()
	}
	return !p.err
}
