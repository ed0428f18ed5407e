package openai

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// ChatRequest is what the gateway reads of a chat completion request. Parse
// fills it; it is meant to be reused (Parse resets it).
type ChatRequest struct {
	// Model is the requested model name. It points into the body unless the
	// name had JSON escapes.
	Model []byte
	// Stream is the request's "stream" flag.
	Stream bool
	// IncludeUsage reports whether a streaming client asked for usage
	// (stream_options.include_usage).
	IncludeUsage bool
	// Tagged reports whether the body holds a signature the gateway
	// tagged (codec.HasSignatureTags), found by the body's check.
	Tagged bool
	// Units is what a speech or image generation request asks for in the
	// unit it is billed by: the characters of a speech's input, the n
	// images of a generation (1 when n is not given, 0 when it is not a
	// positive whole number, which the upstream refuses).
	Units int

	kind          PassKind
	objStart      int    // offset of the body's opening brace
	checked       []byte // the body whose strings Parse checked
	model         rawjson.Field
	streamOptions rawjson.Field
	includeUsage  rawjson.Field
	nameBuf       [64]byte
}

// sigTagMark is how a string the gateway tagged starts (codec.SigTag).
var sigTagMark = [8]byte([]byte(codec.SigTag))

var chatRequests = sync.Pool{New: func() any { return new(ChatRequest) }}

// AcquireChatRequest returns a ChatRequest from a pool; Release hands it
// back.
func AcquireChatRequest() *ChatRequest { return chatRequests.Get().(*ChatRequest) }

// Release hands r back to the pool; r must not be used afterwards.
func (r *ChatRequest) Release() {
	r.Model, r.checked = nil, nil // no hold on the request body
	chatRequests.Put(r)
}

const (
	fModel    = iota
	fMessages // or the other kinds' required field
	fStream
	fStreamOptions
	fN // image generations only
)

// PassKind is the API of a request the gateway relays as it is: each has
// its required field besides the model.
type PassKind uint8

// The kinds of relayed requests.
const (
	PassChat        PassKind = iota // chat completions: messages
	PassCompletions                 // legacy text completions: prompt
	PassEmbeddings                  // embeddings: input, never streamed
	PassImages                      // image generations: prompt
	PassSpeech                      // speech: input, its answer audio
)

// Parse reads and checks a chat completion request body. It returns an
// invalid-request error naming the offending field.
func (r *ChatRequest) Parse(body []byte) *codec.Error { return r.ParseAs(body, PassChat) }

// ParseAs reads and checks a request body of kind k, as Parse does.
func (r *ChatRequest) ParseAs(body []byte, k PassKind) *codec.Error {
	*r = ChatRequest{kind: k}
	fields := [...]rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "stream_options"}, {Key: "n"}}
	looked := fields[:fN]
	switch k {
	case PassCompletions:
		fields[fMessages].Key = "prompt"
	case PassEmbeddings, PassSpeech:
		fields[fMessages].Key = "input"
	case PassImages:
		fields[fMessages].Key = "prompt"
		looked = fields[:]
	}
	// One pass checks the JSON, strings included, and finds the fields. A
	// full scan: a duplicate "model" after the first must be caught, or the
	// allow-list would check one name while the upstream reads another.
	marked, err := rawjson.LookupValidMarked(body, looked, &sigTagMark)
	if err != nil {
		if !rawjson.Valid(body) {
			return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
		}
		return invalid("", err.Error()) // not an object, or a key repeated
	}
	r.checked = body
	r.objStart = bytes.IndexByte(body, '{')
	r.Tagged = marked && codec.HasSignatureTags(body)

	m := fields[fModel]
	name, e := readModel(body, m, r.nameBuf[:0])
	if e != nil {
		return e
	}
	r.Model, r.model = name, m

	if e := checkRequired(body, fields[fMessages], k); e != nil {
		return e
	}
	switch k {
	case PassSpeech:
		r.Units, _ = rawjson.RuneCount(body[fields[fMessages].Start:fields[fMessages].End])
		fallthrough
	case PassEmbeddings:
		return nil // not streamed as events: its stream fields are the upstream's to judge
	case PassImages:
		r.Units = imageCount(body, fields[fN])
	}

	if s := fields[fStream]; s.Start >= 0 {
		switch rawjson.KindOf(body[s.Start:s.End]) {
		case rawjson.KindTrue:
			r.Stream = true
		case rawjson.KindFalse, rawjson.KindNull:
		default:
			return invalid("stream", "'stream' must be a boolean")
		}
	}
	return r.parseStreamOptions(body, fields[fStreamOptions])
}

// imageCount is the n of an image request at f: 1 when absent or null, 0
// when it is not a positive whole number.
func imageCount(body []byte, f rawjson.Field) int {
	if f.Start < 0 || rawjson.KindOf(body[f.Start:f.End]) == rawjson.KindNull {
		return 1
	}
	return positive(body[f.Start:f.End])
}

// positive is the value of v, a positive whole number, else 0.
func positive(v []byte) int {
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// readModel reads the model name of a request, the value of field m:
// a slice of body, or unquoted into buf when it has escapes.
func readModel(body []byte, m rawjson.Field, buf []byte) ([]byte, *codec.Error) {
	if m.Start < 0 {
		return nil, invalid("model", "you must provide a model parameter")
	}
	name, ok := rawjson.StringBytes(body[m.Start:m.End])
	if !ok {
		if rawjson.KindOf(body[m.Start:m.End]) != rawjson.KindString {
			return nil, invalid("model", "'model' must be a string")
		}
		var err error
		if name, err = rawjson.AppendUnquote(buf, body[m.Start:m.End]); err != nil {
			return nil, invalid("model", "'model' is not a valid string")
		}
	}
	if len(name) == 0 {
		return nil, invalid("model", "'model' must not be empty")
	}
	return name, nil
}

// checkRequired checks the field a kind of request cannot go without.
func checkRequired(body []byte, f rawjson.Field, k PassKind) *codec.Error {
	if f.Start < 0 {
		return invalid(f.Key, "Missing required parameter: '"+f.Key+"'.")
	}
	v := body[f.Start:f.End]
	kind := rawjson.KindOf(v)
	switch {
	case k == PassChat && kind != rawjson.KindArray:
		return invalid(f.Key, "'messages' must be an array")
	case k == PassChat && rawjson.ArrayEmpty(v):
		return invalid(f.Key, "'messages' must contain at least one message")
	case k >= PassImages && kind != rawjson.KindString:
		return invalid(f.Key, "'"+f.Key+"' must be a string")
	case k != PassChat && kind != rawjson.KindString && kind != rawjson.KindArray:
		return invalid(f.Key, "'"+f.Key+"' must be a string or an array")
	}
	return nil
}

// DecodeRequest decodes body into c for a translation, as the package's
// DecodeRequest does, but without checking the strings of body again when
// it is the body (the same slice) that Parse last checked; body must not
// have changed since. Any other body is checked in full. An embeddings
// request decodes as DecodeEmbeddingsRequest does.
func (r *ChatRequest) DecodeRequest(body []byte, c *codec.Request) *codec.Error {
	switch r.kind {
	case PassEmbeddings:
		return DecodeEmbeddingsRequest(body, c)
	case PassImages, PassSpeech:
		return invalid("", "This endpoint is served by OpenAI-compatible channels only.") // relayed, never translated
	}
	_, err := decodeRequest(body, c, nil, r.checkedBody(body))
	return err
}

// checkedBody reports whether body is the slice whose strings Parse checked.
func (r *ChatRequest) checkedBody(body []byte) bool {
	return len(body) > 0 && len(body) == len(r.checked) && &body[0] == &r.checked[0]
}

func (r *ChatRequest) parseStreamOptions(body []byte, so rawjson.Field) *codec.Error {
	r.streamOptions = so
	r.includeUsage = rawjson.Field{Start: -1, End: -1}
	if so.Start < 0 {
		return nil
	}
	v := body[so.Start:so.End]
	switch rawjson.KindOf(v) {
	case rawjson.KindNull:
		return nil
	case rawjson.KindObject:
	default:
		return invalid("stream_options", "'stream_options' must be an object")
	}
	inner := [...]rawjson.Field{{Key: "include_usage"}}
	if err := rawjson.Lookup(v, inner[:], true); err != nil {
		return invalid("stream_options", err.Error())
	}
	if iu := inner[0]; iu.Start >= 0 {
		r.includeUsage = rawjson.Field{Start: so.Start + iu.Start, End: so.Start + iu.End}
		r.IncludeUsage = rawjson.KindOf(v[iu.Start:iu.End]) == rawjson.KindTrue
	}
	return nil
}

// edit replaces body[start:end] with text.
type edit struct {
	start, end int
	text       string
	model      bool // text is the model name, to be quoted
}

const (
	usageObject = `{"include_usage":true}`
	usageMember = `"stream_options":{"include_usage":true},`
)

// Unchanged reports whether AppendUpstream would append the body as it is
// for model: the same name, and no usage to ask for. The caller can then
// send the client's bytes themselves and copy nothing.
func (r *ChatRequest) Unchanged(model string) bool {
	return string(r.Model) == model && !r.addsUsage()
}

// addsUsage reports whether the upstream must be asked for usage the client
// did not ask for: a stream, but not of images, whose have no stream_options.
func (r *ChatRequest) addsUsage() bool {
	return r.Stream && !r.IncludeUsage && r.kind < PassEmbeddings
}

// AppendUpstream appends the body to send upstream: the original body with
// the model name replaced by model (when it differs) and, on a stream whose
// client did not ask for usage, stream_options.include_usage switched on so
// that the gateway can count tokens. Everything else stays byte for byte.
func (r *ChatRequest) AppendUpstream(dst, body []byte, model string) []byte {
	var edits [2]edit
	n := 0
	if string(r.Model) != model {
		edits[n] = edit{start: r.model.Start, end: r.model.End, model: true}
		n++
	}
	if r.addsUsage() {
		edits[n] = r.usageEdit(body)
		n++
	}
	if n == 2 && edits[1].start < edits[0].start {
		edits[0], edits[1] = edits[1], edits[0]
	}
	pos := 0
	for _, e := range edits[:n] {
		dst = append(dst, body[pos:e.start]...)
		if e.model {
			dst = rawjson.AppendString(dst, model)
		} else {
			dst = append(dst, e.text...)
		}
		pos = e.end
	}
	return append(dst, body[pos:]...)
}

// usageEdit is the edit that turns on stream_options.include_usage.
func (r *ChatRequest) usageEdit(body []byte) edit {
	so, iu := r.streamOptions, r.includeUsage
	switch {
	case iu.Start >= 0: // present but false or null
		return edit{start: iu.Start, end: iu.End, text: "true"}
	case so.Start < 0:
		at := r.objStart + 1
		return edit{start: at, end: at, text: usageMember}
	case rawjson.KindOf(body[so.Start:so.End]) == rawjson.KindNull:
		return edit{start: so.Start, end: so.End, text: usageObject}
	case rawjson.ObjectEmpty(body[so.Start:so.End]):
		return edit{start: so.Start, end: so.End, text: usageObject}
	default:
		at := so.Start + 1
		return edit{start: at, end: at, text: `"include_usage":true,`}
	}
}

// modelSpanAt is the span of the model name whose value starts at b[v]
// (-1: none) between its quotes, or -1, -1 when it is no string or has
// escapes.
func modelSpanAt(b []byte, v int) (start, end int) {
	if v < 0 || b[v] != '"' {
		return -1, -1
	}
	n := bytes.IndexByte(b[v+1:], '"')
	if n < 0 || bytes.IndexByte(b[v+1:v+1+n], '\\') >= 0 {
		return -1, -1
	}
	return v + 1, v + 1 + n
}

// DecodeUsage decodes the OpenAI usage object at the start of b (what
// follows it is not read). It reads the four counts it needs in place
// instead of a struct decode: this runs on every response, and a usage
// object is small enough that a lookup's fixed cost would be most of the
// work. A usage written as OpenAI writes it is compared with its form,
// any other walked member by member (readUsage).
func DecodeUsage(b []byte) (codec.Usage, error) { return decodeUsage(b, &chatUsage) }

// usageKeys name the members of a usage object: the input and output
// counts, and the details objects that hold the cached and reasoning ones.
// names are the four as bytes; known finds them and the other keys
// answers name, the four first, in usageKeys' order (readKeys). form is
// the usage as OpenAI writes it, and forms the index of each of the four
// counts among its counts (-1: none).
type usageKeys struct {
	input, output, inputDetails, outputDetails string
	names                                      [][]byte
	known                                      *rawjson.KeyTable
	cached, reasoning                          *detailKeys
	form                                       *rawjson.Form
	forms                                      [readKeys]int
}

// readKeys is the number of the keys of a usage that are read: the first
// four of usageKeys.known.
const readKeys = 4

func newUsageKeys(input, output, inputDetails, outputDetails, form string) usageKeys {
	k := usageKeys{input, output, inputDetails, outputDetails,
		[][]byte{[]byte(input), []byte(output), []byte(inputDetails), []byte(outputDetails)},
		rawjson.NewKeyTable(input, output, inputDetails, outputDetails, "total_tokens"),
		&cachedKeys, &reasoningKeys, rawjson.NewForm(form, 2), [readKeys]int{}}
	k.forms = [readKeys]int{k.form.Count(input), k.form.Count(output),
		k.form.Count(inputDetails, cachedKeys.count), k.form.Count(outputDetails, reasoningKeys.count)}
	if k.form.Counts() > maxFormCounts {
		panic("openai: a usage form of more than 9 counts")
	}
	return k
}

// maxFormCounts is the most counts a usage form has.
const maxFormCounts = 9

// detailKeys name the count a details object is read for; known finds it
// (at 0) and the other keys answers name in it.
type detailKeys struct {
	count string
	known *rawjson.KeyTable
}

var cachedKeys, reasoningKeys = newDetailKeys("cached_tokens"), newDetailKeys("reasoning_tokens")

func newDetailKeys(count string) detailKeys {
	return detailKeys{count, rawjson.NewKeyTable(count, "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens")}
}

// unescaped is the one of names that key, spelled with escapes, decodes
// to (rawjson.KeyIs), or nil: the key a client's JSON parser reads. Such a
// key is rare; the common ones are compared as they are.
func unescaped(key []byte, names [][]byte) []byte {
	if n := unescapedIndex(key, names); n >= 0 {
		return names[n]
	}
	return nil
}

// unescapedIndex is unescaped's index in names, or -1.
func unescapedIndex(key []byte, names [][]byte) int {
	for n, name := range names {
		if rawjson.KeyIs(key, false, string(name)) {
			return n
		}
	}
	return -1
}

var chatUsage = newUsageKeys("prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details",
	`{"prompt_tokens":#,"completion_tokens":#,"total_tokens":#,`+
		`"prompt_tokens_details":{"cached_tokens":#,"audio_tokens":#},`+
		`"completion_tokens_details":{"reasoning_tokens":#,"audio_tokens":#,"accepted_prediction_tokens":#,"rejected_prediction_tokens":#}}`)

func decodeUsage(b []byte, k *usageKeys) (codec.Usage, error) {
	var again bool
	u, _, err := readUsage(b, 1, k, &again)
	return u, err
}

// readUsage reads the usage object at the start of b, nested depth levels
// deep in its document, in one pass that also checks it as rawjson.Valid
// does, and returns it with the offset just past it: end is -1 when it is
// not JSON (err then set too), err also set when a count is no count. A
// member read twice counts as its last occurrence, a key with escapes as
// it decodes: what a client's JSON parser reads; so does an error, a
// count that a later occurrence of its member replaces is none. *again
// is set when any of the usage's keys, or a count of its details, is
// named twice or with escapes (codec.Relayed.Again): a reader that takes
// the first of a repeated key reads another usage.
//
// A usage written as OpenAI writes it is read by its form (readForm);
// any other is walked in a loop of its own (rawjson.OpenObject), where
// rawjson.Object's call per member and a search of each key for its
// quote cost as much as the rest: the keys answers name are matched in
// place (rawjson.KeyTable), the others read as Object reads them.
func readUsage(b []byte, depth int, k *usageKeys, again *bool) (u codec.Usage, end int, err error) {
	if u, end, ok := k.readForm(b); ok {
		return u, end, nil
	}
	var errs [readKeys]error // of the last occurrence of each member, in usageKeys' order
	var keys rawjson.KeySet
	i, closed := rawjson.OpenObject(b, 0)
	for !closed {
		if i < 0 || i >= len(b) || b[i] != '"' {
			return u, -1, usageFault(b, depth)
		}
		read, ke := k.keyAt(b, i+1, &keys, again)
		v := rawjson.MemberValue(b, ke)
		if v < 0 {
			return u, -1, usageFault(b, depth)
		}
		switch read {
		case 0:
			u.Input, end, errs[0] = countAt(b, v, depth)
		case 1:
			u.Output, end, errs[1] = countAt(b, v, depth)
		case 2:
			u.CachedInput, end, errs[2] = detail(b, v, depth, k.cached, again)
		case 3:
			u.Reasoning, end, errs[3] = detail(b, v, depth, k.reasoning, again)
		default:
			end = valueEnd(b, v, depth)
		}
		i, closed = rawjson.NextMember(b, end)
	}
	*again = *again || keys.Repeats(b[:i])
	for _, err := range errs {
		if err != nil {
			return u, i, err
		}
	}
	return u, i, nil
}

// readForm reads the usage object at the start of b when it is written as
// OpenAI writes it (k.form, whitespace aside): ok is then true, u its
// counts and end the offset just past it. It is what the walk reads of
// such a usage, in a fraction of its time: valid JSON, every key once and
// without escapes (Again not set), every count an integer.
func (k *usageKeys) readForm(b []byte) (u codec.Usage, end int, ok bool) {
	var counts [maxFormCounts]int
	if end = k.form.Read(b, 0, counts[:]); end < 0 {
		return u, end, false
	}
	at := func(c int) int {
		if c < 0 {
			return 0
		}
		return counts[c]
	}
	return codec.Usage{Input: at(k.forms[0]), Output: at(k.forms[1]), CachedInput: at(k.forms[2]), Reasoning: at(k.forms[3])}, end, true
}

// keyAt reads the key of a usage member whose contents start at b[i]:
// read is the index of the member in usageKeys' order, or -1 for one that
// is not read, ke the offset just past the key, -1 when it is no string.
// A plain key is added to keys; a key with escapes sets *again.
func (k *usageKeys) keyAt(b []byte, i int, keys *rawjson.KeySet, again *bool) (read, ke int) {
	read, ke = k.known.Match(b, i)
	if read < 0 {
		var plain bool
		if ke, plain = rawjson.KeyEnd(b, i); ke < 0 {
			return -1, -1
		}
		if !plain {
			*again = true
			return unescapedIndex(b[i:ke-1], k.names), ke
		}
	}
	keys.Add(b[i : ke-1])
	if read >= readKeys {
		read = -1
	}
	return read, ke
}

// usageFault is the error of the usage object b that is not JSON, at the
// offset where it broke: the walk that found it broken says no more than
// that, and a broken answer is rare enough to be checked again.
func usageFault(b []byte, depth int) error {
	_, err := rawjson.ObjectError(b, depth, 0, checkMember)
	return err
}

// checkMember is the visit of rawjson.Object that reads no member.
func checkMember([]byte, int, bool) int { return 0 }

// valueEnd checks the value at b[v], a member of an object nested depth
// levels deep, and returns the offset just past it, below 0 when it is not
// JSON: a count, what most members of a usage are, is checked as it is
// read (countAt).
func valueEnd(b []byte, v, depth int) int {
	if _, j := rawjson.Count(b, v); j > 0 && j < len(b) && (b[j] == ',' || b[j] == '}') {
		return j
	}
	return rawjson.CheckValue(b, v, depth)
}

// countAt checks the value at b[v], a member of an object nested depth
// levels deep, and reads it as a token count: end is the offset just past
// it, below 0 when it is not JSON.
func countAt(b []byte, v, depth int) (n, end int, err error) {
	n, j := rawjson.Count(b, v)
	if j > 0 && j < len(b) && (b[j] == ',' || b[j] == '}') {
		return n, j, nil // an integer that a separator follows: checked as it is read
	}
	if end = rawjson.CheckValue(b, v, depth); end < 0 {
		return 0, end, nil
	}
	if j == end {
		return n, end, nil // an integer, what a count is (whitespace followed it)
	}
	n, err = count(b[v:end])
	return n, end, err
}

// detail reads the count k.count of the details object (which may be
// null) at b[v], a member of the usage object nested depth levels deep,
// checking it: end is the offset just past it, below 0 when it is not
// JSON. The count named twice or with escapes sets *again; the other
// keys are not told.
func detail(b []byte, v, depth int, k *detailKeys, again *bool) (n, end int, err error) {
	if v >= len(b) || b[v] != '{' {
		end = rawjson.CheckValue(b, v, depth)
		if end >= 0 && rawjson.KindOf(b[v:end]) != rawjson.KindNull {
			err = fmt.Errorf("usage: %.20q is not a details object", b[v:end])
		}
		return 0, end, err
	}
	seen := false
	i, closed := rawjson.OpenObject(b, v)
	for !closed {
		if i < 0 || i >= len(b) || b[i] != '"' {
			return 0, -1, nil
		}
		key, ke := k.known.Match(b, i+1)
		if key < 0 {
			var plain bool
			ke, plain = rawjson.KeyEnd(b, i+1)
			if ke >= 0 && !plain && rawjson.KeyIs(b[i+1:ke-1], false, k.count) {
				key, *again = 0, true
			}
		}
		w := rawjson.MemberValue(b, ke)
		if w < 0 {
			return 0, -1, nil
		}
		end := 0
		if key == 0 {
			*again = *again || seen
			seen = true
			n, end, err = countAt(b, w, depth+1)
		} else {
			end = valueEnd(b, w, depth+1)
		}
		i, closed = rawjson.NextMember(b, end)
	}
	return n, i, err
}

// count reads a token count: null is 0, anything but a non-negative
// integer of at most rawjson.MaxCount is an error.
func count(v []byte) (int, error) {
	if n, end := rawjson.Count(v, 0); end == len(v) {
		return n, nil
	}
	if rawjson.KindOf(v) == rawjson.KindNull {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 0 || n > rawjson.MaxCount {
		return 0, fmt.Errorf("usage: %q is not a token count", v)
	}
	return n, nil
}
