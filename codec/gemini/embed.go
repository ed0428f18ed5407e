package gemini

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Gemini's embeddings: embedContent ({"content", "taskType", "title",
// "outputDimensionality"} → {"embedding":{"values"}}) and
// batchEmbedContents ({"requests":[…]}, each an embedContent body with
// its "model" → {"embeddings":[…]}). A request decodes into a
// codec.Request's Embed, an answer into a codec.Response's Vectors. The
// gateway asks Gemini upstreams for a batch always (the path of
// codec.OpEmbed).

// embedRequest is one EmbedContentRequest as read.
type embedRequest struct {
	text            string
	content         bool
	taskType, title string
	dims            int
}

// embedDecoder carries the state of one DecodeEmbedRequest.
type embedDecoder struct {
	p    parser
	sd   strDecoder
	part wirePart
}

// DecodeEmbedRequest reads an embedContent body, or a batchEmbedContents
// one (the body holds "requests"), into r, which it resets first;
// r.Embed.Single says which it was. The text parts of a content are one
// text, joined by newlines; other parts are refused. The requests of a
// batch must ask for one outputDimensionality (an OpenAI upstream takes
// one for all inputs); the task type and the title are the first ones a
// request gives. r.Model is left to the caller (the URL names it), and so
// are the requests' own "model" fields.
func DecodeEmbedRequest(body []byte, r *codec.Request) *codec.Error {
	r.Reset()
	d := embedDecoder{p: parser{b: body}, sd: strDecoder{capHint: len(body)}}
	if d.p.peek() != '{' {
		return invalid("", "Invalid JSON payload received: want a JSON object")
	}
	var w embedRequest
	batch, err := d.request("", &w, &r.Embed)
	switch {
	case err != nil:
		return err
	case !d.p.end():
		return invalid("", "Invalid JSON payload received")
	case batch && w.content:
		return invalid("content", "A body holds either requests (batchEmbedContents) or content (embedContent), not both.")
	case batch && len(r.Embed.Texts) == 0:
		return invalid("requests", "* BatchEmbedContentsRequest.requests: requests must not be empty")
	case batch:
		return nil
	}
	if err := requireContent(&w, ""); err != nil {
		return err
	}
	r.Embed = codec.Embed{Texts: []string{w.text}, TaskType: w.taskType, Title: w.title, Dimensions: w.dims, Single: true}
	return nil
}

// request reads the EmbedContentRequest at the cursor into w. at is its
// path in errors ("" or "requests[i]."); a top-level one (e not nil) may
// be a batch, whose requests it adds to e.
func (d *embedDecoder) request(at string, w *embedRequest, e *codec.Embed) (batch bool, _ *codec.Error) {
	p := &d.p
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false, syntaxError(p, strings.TrimSuffix(at, "."))
	}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		field := ""
		switch string(fold(&kb, k)) {
		case "content":
			if err := d.content(at, w); err != nil {
				return false, err
			}
		case "tasktype":
			w.taskType, ok = p.str(&d.sd)
			field = "taskType"
		case "title":
			w.title, ok = p.str(&d.sd)
			field = "title"
		case "outputdimensionality":
			w.dims, ok = p.int()
			ok = ok && w.dims >= 0
			field = "outputDimensionality"
		case "requests":
			if e == nil {
				p.skip()
				break
			}
			batch = true
			if err := d.batch(e); err != nil {
				return false, err
			}
		default:
			p.skip()
		}
		if !ok {
			return false, syntaxError(p, at+field)
		}
	}
	if p.err {
		return false, syntaxError(p, strings.TrimSuffix(at, "."))
	}
	return batch, nil
}

// batch reads a batch's requests into e.
func (d *embedDecoder) batch(e *codec.Embed) *codec.Error {
	p := &d.p
	list := p.array()
	for i := 0; p.elem(&list); i++ {
		at := "requests[" + strconv.Itoa(i) + "]."
		var w embedRequest
		if _, err := d.request(at, &w, nil); err != nil {
			return err
		}
		if err := requireContent(&w, at); err != nil {
			return err
		}
		if i > 0 && w.dims != e.Dimensions {
			return invalid(at+"outputDimensionality", "Every request of a batch must ask for the same outputDimensionality.")
		}
		e.Texts = append(e.Texts, w.text)
		e.Dimensions = w.dims
		e.TaskType = cmp.Or(e.TaskType, w.taskType)
		e.Title = cmp.Or(e.Title, w.title)
	}
	if p.err {
		return syntaxError(p, "requests")
	}
	return nil
}

// requireContent is the 400 for a request without a content to embed.
func requireContent(w *embedRequest, at string) *codec.Error {
	if !w.content {
		return invalid(at+"content", "* EmbedContentRequest.content: content is not specified")
	}
	return nil
}

// content reads a Content into w.text: its text parts.
func (d *embedDecoder) content(at string, w *embedRequest) *codec.Error {
	p := &d.p
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return syntaxError(p, at+"content")
	}
	var texts []string
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "parts" {
			p.skip()
			continue
		}
		parts := p.array()
		for j := 0; p.elem(&parts); j++ {
			if field, ok := parsePart(p, &d.part, &d.sd); !ok {
				return syntaxError(p, at+"content."+field)
			}
			if !isTextPart(&d.part) {
				return invalid(at+"content.parts["+strconv.Itoa(j)+"]",
					"Only text can be embedded through this gateway: the part holds something else.")
			}
			texts = append(texts, d.part.Text)
		}
	}
	if p.err {
		return syntaxError(p, at+"content")
	}
	if len(texts) == 0 {
		return invalid(at+"content.parts", "The content has no text to embed.")
	}
	w.content, w.text = true, strings.Join(texts, "\n")
	return nil
}

func isTextPart(w *wirePart) bool {
	return w.InlineData == (wireBlob{}) && w.FileData == (wireFileData{}) && w.FunctionCall.Name == "" &&
		w.FunctionResponse.Name == "" && !w.ServerSide
}

// AppendEmbedRequest appends the body of a batchEmbedContents request for
// r: one request per text, each naming r.Model (as the API requires) with
// r's task type, title and outputDimensionality. Gemini takes text only:
// token-id inputs are refused.
func AppendEmbedRequest(dst []byte, r *codec.Request) ([]byte, []string, *codec.Error) {
	e := &r.Embed
	if len(e.Tokens) > 0 {
		return dst, nil, invalid("input", "Gemini channels take text: send 'input' as strings, not token ids.")
	}
	dst = append(dst, `{"requests":[`...)
	for i, t := range e.Texts {
		dst = appendModelMember(append(appendComma(dst, i), '{'), r.Model)
		dst = append(dst, `,"content":{"parts":[{"text":`...)
		dst = rawjson.AppendString(dst, t)
		dst = append(dst, `}]}`...)
		if e.TaskType != "" {
			dst = append(dst, `,"taskType":`...)
			dst = rawjson.AppendString(dst, e.TaskType)
		}
		if e.Title != "" {
			dst = append(dst, `,"title":`...)
			dst = rawjson.AppendString(dst, e.Title)
		}
		if e.Dimensions > 0 {
			dst = append(dst, `,"outputDimensionality":`...)
			dst = strconv.AppendInt(dst, int64(e.Dimensions), 10)
		}
		dst = append(dst, '}')
	}
	var dropped []string
	if r.User != "" {
		dropped = append(dropped, NoteUser)
	}
	return append(dst, "]}"...), dropped, nil
}

// appendModelMember appends `"model":"models/{model}"`.
func appendModelMember(dst []byte, model string) []byte {
	return appendModelName(append(dst, `"model":`...), model)
}

// appendModelName appends `"models/{model}"`.
func appendModelName(dst []byte, model string) []byte {
	dst = append(dst, `"`+modelsSegment...)
	dst = rawjson.AppendEscaped(dst, strings.TrimPrefix(model, modelsSegment))
	return append(dst, '"')
}

// AppendBatchModel appends a batchEmbedContents body with each request's
// "model" set to model (added first where a request has none), the rest
// byte for byte; ok is false when body holds no such requests.
func AppendBatchModel(dst, body []byte, model string) (_ []byte, ok bool) {
	p := parser{b: body}
	var kb [40]byte
	start, pos := len(dst), 0
	l, _ := p.object()
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "requests" {
			p.skip()
			continue
		}
		list := p.array()
		for p.elem(&list) {
			if p.peek() != '{' {
				p.skip()
				continue
			}
			open, members, found := p.i+1, 0, false
			rl, _ := p.object()
			for k, more := p.key(&rl); more; k, more = p.key(&rl) {
				members++
				if p.peek(); string(fold(&kb, k)) == "model" {
					dst = appendModelName(append(dst, body[pos:p.i]...), model)
					found = true
					p.skip()
					pos = p.i
					continue
				}
				p.skip()
			}
			if !found {
				dst = appendModelMember(append(dst, body[pos:open]...), model)
				if members > 0 {
					dst = append(dst, ',')
				}
				pos = open
			}
			ok = true
		}
	}
	if !p.end() || !ok {
		return dst[:start], false
	}
	return append(dst, body[pos:]...), true
}

// DecodeEmbedResponse reads a batchEmbedContents answer
// ({"embeddings":[{"values":[…]}…]}), or an embedContent one
// ({"embedding":{…}}), into r.Vectors, and the prompt tokens of its
// usageMetadata into r.Usage.Input when it has one (Gemini's API sends
// none: the gateway estimates them).
func DecodeEmbedResponse(body []byte, r *codec.Response) error {
	r.Reset()
	p := parser{b: body}
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return errNotObject
	}
	for k, more := p.key(&l); more && ok; k, more = p.key(&l) {
		switch string(fold(&kb, k)) {
		case "embeddings":
			list := p.array()
			for ok && p.elem(&list) {
				ok = parseEmbedding(&p, r)
			}
		case "embedding":
			ok = parseEmbedding(&p, r)
		case "usagemetadata":
			var u wireUsage
			ok = parseUsage(&p, &u)
			r.Usage.Input = u.PromptTokenCount
		default:
			p.skip()
		}
	}
	if !ok || !p.end() {
		return errSyntax
	}
	return nil
}

// parseEmbedding reads a ContentEmbedding's values into a vector of r.
func parseEmbedding(p *parser, r *codec.Response) bool {
	var kb [40]byte
	l, ok := p.object()
	if !ok {
		return false
	}
	v := []float32{}
	for k, more := p.key(&l); more; k, more = p.key(&l) {
		if string(fold(&kb, k)) != "values" {
			p.skip()
			continue
		}
		list := p.array()
		for p.elem(&list) {
			s, ok := p.numberText()
			f, err := strconv.ParseFloat(s, 32)
			if !ok || err != nil {
				return false
			}
			v = append(v, float32(f))
		}
	}
	r.Vectors = append(r.Vectors, v)
	return !p.err
}

// AppendEmbedResponse appends the answer to a batchEmbedContents request,
// or, single, to an embedContent one (the first vector).
func AppendEmbedResponse(dst []byte, vectors [][]float32, single bool) []byte {
	if single {
		var v []float32
		if len(vectors) > 0 {
			v = vectors[0]
		}
		dst = append(dst, `{"embedding":{"values":`...)
		return append(codec.AppendVector(dst, v), "}}"...)
	}
	dst = append(dst, `{"embeddings":[`...)
	for i, v := range vectors {
		dst = append(appendComma(dst, i), `{"values":`...)
		dst = append(codec.AppendVector(dst, v), '}')
	}
	return append(dst, "]}"...)
}
