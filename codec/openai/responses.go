package openai

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// OpenAI's Responses API as the gateway relays it to a channel that serves
// it natively: what it reads of a request to route it, of an answer to
// count it and to remember which channel made it, and of the stream of
// typed events. (The API as a client style translated through the
// canonical model is codec/responses.)

// responsesPaths are the paths of the Responses operations; the ones on a
// stored response add its id, then the suffix.
var responsesPaths = map[codec.Op][2]string{
	codec.OpResponses: {"/responses", ""}, codec.OpResponsesCount: {"/responses/input_tokens", ""},
	codec.OpResponseGet: {"/responses/", ""}, codec.OpResponseDelete: {"/responses/", ""},
	codec.OpResponseCancel: {"/responses/", "/cancel"}, codec.OpResponseInputItems: {"/responses/", "/input_items"},
	codec.OpResponsesCompact: {"/responses/compact", ""},
}

// appendResponsesPath appends p's path for the response id (the ops on a
// stored response) or nothing (the others, whose model is in the body).
func appendResponsesPath(dst []byte, p [2]string, id string) []byte {
	dst = append(dst, p[0]...)
	if p[0][len(p[0])-1] == '/' {
		dst = append(dst, id...)
	}
	return append(dst, p[1]...)
}

// ValidResponseID reports whether id can name a response: OpenAI's ids
// are letters, digits, underscores and dashes (resp_…); the gateway's own
// (resp_ and a request id) may hold dots and colons too. All of these are
// safe in a URL path as they are, and a dot never starts one.
func ValidResponseID[T string | []byte](id T) bool {
	if len(id) == 0 || len(id) > 256 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' ||
			c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// ResponsesRequest is what the gateway reads of a Responses request
// (POST /responses, and /responses/input_tokens): enough to route it and
// to relay it with the model spliced in. Parse fills it; it is pooled.
type ResponsesRequest struct {
	// Model is the requested model name; it points into the body unless
	// the name had escapes.
	Model []byte
	// Stream is the request's "stream" flag; Background its "background".
	Stream, Background bool
	// Store is false when the request says "store": false (the API keeps
	// responses by default).
	Store bool
	// Previous is the previous_response_id, nil when there is none.
	Previous []byte
	// Tagged reports whether the body holds a signature the gateway
	// tagged (codec.HasSignatureTags): it may not go upstream as it is.
	Tagged bool
	// TextBytes is the length of what the model reads (input,
	// instructions, tools), for an estimate of its tokens.
	TextBytes int

	model   rawjson.Field
	nameBuf [64]byte
}

var responsesRequests = sync.Pool{New: func() any { return new(ResponsesRequest) }}

// AcquireResponsesRequest returns a ResponsesRequest from a pool; Release
// hands it back.
func AcquireResponsesRequest() *ResponsesRequest {
	return responsesRequests.Get().(*ResponsesRequest)
}

// Release hands r back to the pool; r must not be used afterwards.
func (r *ResponsesRequest) Release() {
	r.Model, r.Previous = nil, nil // no hold on the request body
	responsesRequests.Put(r)
}

const (
	rModel = iota
	rInput
	rStream
	rStore
	rPrevious
	rBackground
	rInstructions
	rTools
)

// Parse reads and checks a Responses request body, in one pass that also
// checks the JSON; an error names the offending field as OpenAI's does.
func (r *ResponsesRequest) Parse(body []byte) *codec.Error {
	*r = ResponsesRequest{Store: true}
	fields := [...]rawjson.Field{{Key: "model"}, {Key: "input"}, {Key: "stream"}, {Key: "store"},
		{Key: "previous_response_id"}, {Key: "background"}, {Key: "instructions"}, {Key: "tools"}}
	marked, err := rawjson.LookupValidMarked(body, fields[:], &sigTagMark)
	if err != nil {
		if !rawjson.Valid(body) {
			return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
		}
		return invalid("", err.Error())
	}
	r.Tagged = marked && codec.HasSignatureTags(body)
	name, e := readModel(body, fields[rModel], r.nameBuf[:0])
	if e != nil {
		return e
	}
	r.Model, r.model = name, fields[rModel]
	for _, f := range [...]rawjson.Field{fields[rInput], fields[rInstructions], fields[rTools]} {
		r.TextBytes += f.End - f.Start // 0 when absent (-1 - -1)
	}
	if f := fields[rInput]; f.Start >= 0 {
		if k := rawjson.KindOf(body[f.Start:f.End]); k != rawjson.KindString && k != rawjson.KindArray {
			return invalid("input", "Invalid type for 'input': expected a string or an array of input items.")
		}
	}
	for _, b := range [...]struct {
		f   rawjson.Field
		dst *bool
	}{{fields[rStream], &r.Stream}, {fields[rStore], &r.Store}, {fields[rBackground], &r.Background}} {
		if e := readBool(body, b.f, b.dst); e != nil {
			return e
		}
	}
	return r.readPrevious(body, fields[rPrevious])
}

// readBool reads the optional boolean field f into dst (left as it is
// when the field is absent or null).
func readBool(body []byte, f rawjson.Field, dst *bool) *codec.Error {
	if f.Start < 0 {
		return nil
	}
	switch rawjson.KindOf(body[f.Start:f.End]) {
	case rawjson.KindTrue:
		*dst = true
	case rawjson.KindFalse:
		*dst = false
	case rawjson.KindNull:
	default:
		return invalid(f.Key, "Invalid type for '"+f.Key+"': expected a boolean.")
	}
	return nil
}

func (r *ResponsesRequest) readPrevious(body []byte, f rawjson.Field) *codec.Error {
	if f.Start < 0 || rawjson.KindOf(body[f.Start:f.End]) == rawjson.KindNull {
		return nil
	}
	id, ok := rawjson.StringBytes(body[f.Start:f.End])
	if !ok || !ValidResponseID(id) {
		return invalid(f.Key, "Invalid 'previous_response_id': expected an ID that contains letters, numbers, underscores, dashes, dots or colons.")
	}
	r.Previous = id
	return nil
}

// Unchanged reports whether AppendUpstream would append the body as it is
// for model: it names the same model.
func (r *ResponsesRequest) Unchanged(model string) bool { return string(r.Model) == model }

// AppendUpstream appends the body to send upstream: the client's bytes
// with the model replaced by model when it differs.
func (r *ResponsesRequest) AppendUpstream(dst, body []byte, model string) []byte {
	if r.Unchanged(model) {
		return append(dst, body...)
	}
	dst = append(dst, body[:r.model.Start]...)
	dst = rawjson.AppendString(dst, model)
	return append(dst, body[r.model.End:]...)
}

// DecodeRequest refuses: a Responses request the gateway translates is
// decoded by codec/responses, never from this reading of it.
func (r *ResponsesRequest) DecodeRequest([]byte, *codec.Request) *codec.Error {
	return invalid("", "This request is relayed to OpenAI channels only.")
}

// Responses is the pass-through of the Responses API to an upstream that
// serves it natively: OpenAI's dialect but for what it reads of answers
// and events, and for the event that ends a broken stream.
var Responses codec.Dialect = responsesDialect{}

type responsesDialect struct{ dialect }

// ReadRelayed checks a whole answer (a response object, a deleted one, a
// list of input items) and finds its top-level model and usage.
func (responsesDialect) ReadRelayed(body []byte) (codec.Relayed, bool) {
	return readRelayed(body, &responsesUsage)
}

// eventKeys are what an event is checked for: the top-level response
// object of the lifecycle events (response.created, .in_progress,
// .completed, …).
var eventKeys = []string{"response"}

// RelayEvent checks that the event is JSON, and on a lifecycle event
// reads the response's id and status into r (the id once, from the first)
// and its usage, and puts the public model name in. Other events (the
// deltas) are only checked. The response, and its model and usage, are
// the last members so named, keys decoded, as a client's JSON parser reads
// them; the model of every response object is renamed, and a response
// named more than once or with escapes is replaced whole by the last
// (appendLastResponse). It allocates nothing once r's buffers have grown
// (but for such a response).
func (responsesDialect) RelayEvent(dst, ev, data []byte, r *codec.Relay) ([]byte, error) {
	var at [1]int
	if !rawjson.ValidTopKeys(data, eventKeys, at[:]) {
		return dst, codec.ErrNotJSON
	}
	resp := at[0]
	if resp < 0 {
		// A delta has no key named response in any spelling unless it has
		// a \u escape (a text's \n or \" spells no letter of it): the
		// first backslash is searched alone, as most deltas have none.
		if i := bytes.IndexByte(data, '\\'); i < 0 || !bytes.Contains(data[i:], strEscapeU) {
			return append(dst, ev...), nil
		}
	}
	keys := [...]rawjson.Last{{Key: "response"}}
	rawjson.LastKeys(data, rawjson.SkipSpace(data, 0), keys[:])
	var usage []byte
	again := keys[0].Again // an earlier response, which a client may read
	switch at := keys[0].At; {
	case at >= 0 && data[at] == '{':
		var repeats bool
		usage, repeats = readResponse(data[at:], r)
		again = again || repeats
	case !again:
		return append(dst, ev...), nil
	}
	if keys[0].Again {
		return appendLastResponse(dst, ev, data, keys[0].At, r.Model), nil
	}
	var edits [2]codec.Edit
	n := 0
	if r.Model != "" {
		edits[n] = codec.Edit{Path: responseModelPath, Name: r.Model}
		n++
	}
	if again { // made the same for a client that reads the first
		last := []byte("null")
		if usage != nil {
			last = rawjson.AppendLast(nil, usage)
		}
		edits[n] = codec.Edit{Path: responseUsagePath, JSON: last}
		n++
	}
	if n == 0 {
		return append(dst, ev...), nil
	}
	return codec.AppendEdited(dst, ev, data, edits[:n]), nil
}

var strEscapeU = []byte(`\u`)

// appendLastResponse appends ev with every response member replaced by
// the last one, at data[at], reduced to the last of each key
// (rawjson.AppendLast) and its model renamed (model "": kept): a client
// that takes the first of a repeated key (the Go SDK) would otherwise read
// an earlier response, which may have no usage or another id than the
// one the relay bills and keeps.
func appendLastResponse(dst, ev, data []byte, at int, model string) []byte {
	last := codec.LastReduced(data, at, responseModelPath[1], model)
	return codec.AppendEdited(dst, ev, data, []codec.Edit{{Path: responseModelPath[:1], JSON: last}})
}

// responseModelPath and responseUsagePath name a lifecycle event's model
// and usage for codec.AppendEdited.
var responseModelPath, responseUsagePath = []string{"response", "model"}, []string{"response", "usage"}

// readResponse reads the id, status and usage of the response object
// that starts b, checked JSON, into r, and returns the last usage (nil for
// none); again reports a usage named twice or with escapes, or one that
// repeats a key.
func readResponse(b []byte, r *codec.Relay) (usage []byte, again bool) {
	id, status := ResponseState(b)
	if len(r.ID) == 0 {
		r.ID = append(r.ID, id...)
	}
	r.Status = append(r.Status[:0], status...)
	keys := [...]rawjson.Last{{Key: "usage"}}
	rawjson.LastKeys(b, 0, keys[:])
	u := keys[0].At
	if u < 0 {
		return nil, keys[0].Again
	}
	if b[u] == '{' {
		if u, err := DecodeResponsesUsage(b[u:]); err == nil {
			r.Usage = u
		}
	}
	return b[u:rawjson.ValueEnd(b, u)], keys[0].Again || rawjson.Repeats(b[u:])
}

// AppendStreamError appends the Responses API's error event.
func (responsesDialect) AppendStreamError(dst []byte, e *codec.Error) []byte {
	dst = append(dst, "event: error\ndata: {\"type\":\"error\",\"code\":"...)
	dst = rawjson.AppendStringOrNull(dst, e.Code)
	dst = append(dst, `,"message":`...)
	dst = rawjson.AppendString(dst, e.Message)
	dst = append(dst, `,"param":`...)
	dst = rawjson.AppendStringOrNull(dst, e.Param)
	return append(dst, "}\n\n"...)
}

// ResponseState reads the id and status of the response object that
// starts b, checked JSON (what follows it is not read); a member missing,
// or not a plain string, is nil. It stops at the status, which a response
// names early, and passes the members before it over unchecked.
func ResponseState(b []byte) (id, status []byte) {
	m := rawjson.Members(b)
	for (id == nil || status == nil) && m.NextKey() && m.PassValue() {
		switch string(m.Key()) {
		case "id":
			id, _ = rawjson.StringBytes(m.Value())
		case "status":
			status, _ = rawjson.StringBytes(m.Value())
		}
	}
	return id, status
}

// DecodeResponsesUsage decodes the usage object of a response at the start
// of b: input_tokens (cached ones in input_tokens_details), output_tokens
// (reasoning ones in output_tokens_details).
func DecodeResponsesUsage(b []byte) (codec.Usage, error) { return decodeUsage(b, &responsesUsage) }

var responsesUsage = newUsageKeys("input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details",
	`{"input_tokens":#,"input_tokens_details":{"cached_tokens":#},"output_tokens":#,"output_tokens_details":{"reasoning_tokens":#},"total_tokens":#}`)

// ResponsesCount is the answer to an input token count.
func ResponsesCount(dst []byte, n int) []byte {
	dst = append(dst, `{"object":"response.input_tokens","input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '}')
}
