package codec

import "github.com/rosetta-gateway/rosetta/codec/rawjson"

// Op is an operation of a provider API: what a client asks the gateway for,
// and what the gateway asks an upstream for.
type Op uint8

// The operations.
const (
	// OpGenerate generates a response: a Request in, a Response (or a
	// stream of Events) out.
	OpGenerate Op = iota
	// OpCountTokens counts a request's input tokens: a Request in, a
	// Response whose Usage.Input is the count out.
	OpCountTokens
	// OpComplete completes a text prompt (OpenAI's legacy /completions):
	// relayed as it is, never translated.
	OpComplete
	// OpEmbed turns texts into vectors (OpenAI's /embeddings).
	OpEmbed
	// OpRerank orders documents by their relevance to a query (the
	// /rerank of Cohere- and Jina-compatible servers): a Request with
	// Rerank in, a Response with Ranking out.
	OpRerank
	// The media operations are relayed as they are, never translated:
	// OpImage generates images from a prompt (JSON), OpImageEdit and
	// OpImageVariation take uploaded images (multipart); OpSpeech turns
	// text into audio (JSON in, audio bytes out), OpTranscribe and
	// OpTranslate turn uploaded audio into text (multipart).
	OpImage
	OpImageEdit
	OpImageVariation
	OpSpeech
	OpTranscribe
	OpTranslate
	// OpRealtime is a realtime session (OpenAI's GET /realtime): a
	// WebSocket whose frames are relayed as they are, both ways.
	OpRealtime
	// The Responses API on a channel that serves it natively, relayed as
	// it is: OpResponses creates a response, OpResponsesCount counts a
	// request's input tokens. The operations on a response the upstream
	// keeps take its id where the others take a model (HTTP.Path's model
	// is the id): OpResponseGet reads it, OpResponseDelete deletes it,
	// OpResponseCancel cancels a background one, OpResponseInputItems
	// lists its input items. OpResponsesCompact compacts a conversation
	// (OpenAI's encrypted compaction item: no other provider reads it).
	OpResponses
	OpResponsesCount
	OpResponseGet
	OpResponseDelete
	OpResponseCancel
	OpResponseInputItems
	OpResponsesCompact
)

var opNames = [...]string{OpGenerate: "generate", OpCountTokens: "token count", OpComplete: "completion",
	OpEmbed: "embedding", OpRerank: "rerank", OpImage: "image generation", OpImageEdit: "image edit",
	OpImageVariation: "image variation", OpSpeech: "speech", OpTranscribe: "transcription", OpTranslate: "translation",
	OpRealtime: "realtime session", OpResponses: "response", OpResponsesCount: "response token count",
	OpResponseGet: "response retrieval", OpResponseDelete: "response deletion", OpResponseCancel: "response cancellation",
	OpResponseInputItems: "response input items", OpResponsesCompact: "response compaction"}

func (o Op) String() string { return opNames[o] }

// Endpoint is the family of APIs op belongs to, by the name a channel's
// configuration narrows what it serves with (channels[].endpoints): chat
// (generate and count tokens), completions, embeddings, rerank, images
// (generations, edits, variations), audio (speech, transcriptions,
// translations), realtime (realtime WebSocket sessions), responses (the
// Responses API).
func (o Op) Endpoint() string { return opEndpoints[o] }

var opEndpoints = [...]string{OpGenerate: "chat", OpCountTokens: "chat", OpComplete: "completions", OpEmbed: "embeddings",
	OpRerank: "rerank", OpImage: "images", OpImageEdit: "images", OpImageVariation: "images",
	OpSpeech: "audio", OpTranscribe: "audio", OpTranslate: "audio", OpRealtime: "realtime",
	OpResponses: "responses", OpResponsesCount: "responses", OpResponseGet: "responses", OpResponseDelete: "responses",
	OpResponseCancel: "responses", OpResponseInputItems: "responses", OpResponsesCompact: "responses"}

// Endpoints lists the endpoint families, in a stable order.
func Endpoints() []string {
	return []string{"chat", "completions", "embeddings", "rerank", "images", "audio", "realtime", "responses"}
}

// Ops lists the operations, those of one family next to each other
// (ServedEndpoints relies on it).
func Ops() []Op {
	return []Op{OpGenerate, OpCountTokens, OpComplete, OpEmbed, OpRerank,
		OpImage, OpImageEdit, OpImageVariation, OpSpeech, OpTranscribe, OpTranslate, OpRealtime,
		OpResponses, OpResponsesCount, OpResponseGet, OpResponseDelete, OpResponseCancel, OpResponseInputItems,
		OpResponsesCompact}
}

// Serves reports whether a dialect's API has an endpoint for op.
func Serves(d Dialect, op Op) bool {
	_, ok := d.HTTP().Path(nil, op, "model", false)
	return ok
}

// ServedEndpoints lists the endpoint families a dialect's API has.
func ServedEndpoints(d Dialect) []string {
	var list []string
	for _, op := range Ops() {
		if e := op.Endpoint(); Serves(d, op) && (len(list) == 0 || list[len(list)-1] != e) {
			list = append(list, e)
		}
	}
	return list
}

// DecodeCount reads an upstream's count answer with decode into r, as
// OpCountTokens answers: the count in Usage.Input.
func DecodeCount(body []byte, r *Response, decode func([]byte) (int, error)) error {
	n, err := decode(body)
	r.Reset()
	r.Usage.Input = n
	return err
}

// Options are the per-exchange settings of a dialect's request codec.
type Options struct {
	// Version is the API version the client spoke (when decoding) or the
	// channel speaks (when encoding), for dialects whose wire format
	// depends on it (Anthropic); "" is the dialect's default.
	Version string
}

// Dialect is one provider API style, its whole wire format behind uniform
// signatures. Each dialect package exports one (openai.Dialect,
// anthropic.Dialect, gemini.Dialect); the rest of the program knows a style
// through it alone.
type Dialect interface {
	// Name is the style's name, which is also the type of the channels
	// that speak it: "openai", "anthropic", "gemini".
	Name() string
	// HTTP is where the style's API lives and how it authenticates.
	HTTP() *HTTP

	// DecodeRequest reads a client's request for op into r.
	DecodeRequest(op Op, body []byte, r *Request, o Options) *Error
	// AppendRequest appends r as the body of an upstream request for op,
	// and names the features of r that the style cannot carry.
	AppendRequest(op Op, dst []byte, r *Request, o Options) (_ []byte, dropped []string, _ *Error)
	// DecodeResponse reads an upstream's answer to op into r.
	DecodeResponse(op Op, body []byte, r *Response) error
	// AppendResponse appends r as the answer to a client's op.
	AppendResponse(op Op, dst []byte, r *Response, info StreamInfo) []byte

	// NewStreamDecoder and NewStreamEncoder make a stream's state
	// machines; callers reuse them.
	NewStreamDecoder() StreamDecoder
	NewStreamEncoder() StreamEncoder

	// AppendError appends e as a whole error response; AppendStreamError
	// as the event that ends a stream already under way.
	AppendError(dst []byte, e *Error) []byte
	AppendStreamError(dst []byte, e *Error) []byte
	// DecodeError reads an upstream's error response; ok is false when
	// the body is not in the style's error shape.
	DecodeError(status int, body []byte) (_ Error, ok bool)

	// ReadRateLimit reads what an upstream's answer (its headers, and its
	// error body) says of its rate limits; SetRateLimit writes rl for a
	// client in the style's header names (buf is scratch, returned for
	// reuse).
	ReadRateLimit(h HeaderReader, body []byte) RateLimit
	SetRateLimit(h HeaderWriter, buf []byte, rl RateLimit) []byte

	// AppendModelList appends the answer to a listing of the models ids,
	// created (a Unix time) being when the gateway started.
	AppendModelList(dst []byte, ids []string, created int64) []byte
	// AppendModel appends the answer to a look-up of one model.
	AppendModel(dst []byte, id string, created int64) []byte

	PassThrough
}

// PassThrough is what the gateway needs of a style when the client and the
// upstream both speak it: the bytes go through as they are but for the
// model name, and usage is read on the way.
type PassThrough interface {
	// Tagged reports whether a client's body holds what the gateway
	// tagged for this style's clients (another provider's signatures): it
	// is then translated even to a channel of the same style.
	Tagged(body []byte) bool
	// AppendModelRequest appends a client's request body with its model
	// replaced by the upstream's name. (A style that names the model in
	// the URL appends the body unchanged.)
	AppendModelRequest(dst, body []byte, model string) []byte
	// ReadRelayed checks that a whole response is JSON (ok false when it
	// is not) and reads what the gateway needs of it, in as few passes as
	// the style allows.
	ReadRelayed(body []byte) (_ Relayed, ok bool)
	// RelayEvent appends one upstream stream event ev (data is its data,
	// when it has one line of it) for the client: see Relay. It fails on
	// an event it cannot decode.
	RelayEvent(dst, ev, data []byte, r *Relay) ([]byte, error)
	// DecodesRelayed reports whether RelayEvent reads the events with
	// Relay.Dec (a decoder held for the whole stream: memory per open
	// stream), rather than on its own.
	DecodesRelayed() bool
}

// Relayed is what the gateway reads of a whole response it relays.
type Relayed struct {
	// ModelStart and ModelEnd delimit the model name between its quotes;
	// -1, -1 when there is none (or it is written with escapes).
	ModelStart, ModelEnd int
	// Usage is what the response reports, when HasUsage.
	Usage    Usage
	HasUsage bool
	// Again is set when readers differ on the answer: its model or its
	// usage named more than once or with escapes, its model spelled with
	// escapes, or its usage naming a key twice or with escapes. The relay
	// then sends AppendRelayed's answer, which every client reads alike.
	// The rule is the stream relays' (RelayRenamed), but that a whole
	// answer's usage is told it as it is read (rawjson.KeySet): at its own
	// level for every key, in the objects nested in it for the counts
	// billed alone, where an event's usage is walked again at every level
	// (rawjson.Repeats).
	Again bool
	// Keys are the style's keys of the model and the usage (Again only),
	// UsageAt the offset of the usage read (-1: none).
	Keys    *Renaming
	UsageAt int
}

// AppendRelayed appends the whole answer body that r was read from, with
// every top-level model renamed (model is the public name as it stands
// between quotes; "" keeps the upstream's last, written in every one)
// and every top-level usage object made the one a parser that takes the
// last of a repeated key reads (as RelayRenamed makes an event's): the
// answer that a client of any JSON parser reads as the gateway bills it.
// Only for an answer r reports Again.
func (r *Relayed) AppendRelayed(dst, body []byte, model string) []byte {
	top := Renaming{Model: r.Keys.Model, Usage: r.Keys.Usage}
	at := [4]int{-1, r.UsageAt, -1, -1}
	if model == "" { // found again here, off the common path
		m := [...]rawjson.Last{{Key: r.Keys.Model}}
		rawjson.LastKeys(body, rawjson.SkipSpace(body, 0), m[:])
		at[0] = m[0].At
	}
	return appendNormalized(dst, body, body, model, &top, at, rawjson.Last{At: -1})
}

// ReadRelayedWith is ReadRelayed for a style that reads the model span and
// the usage in passes of their own, after Valid.
func ReadRelayedWith(body []byte, modelSpan func([]byte) (int, int), usage func([]byte) (Usage, bool)) (Relayed, bool) {
	if !Valid(body) {
		return Relayed{}, false
	}
	var r Relayed
	r.ModelStart, r.ModelEnd = modelSpan(body)
	r.Usage, r.HasUsage = usage(body)
	return r, true
}

// ReadRelayedLast is ReadRelayed for a style whose answer names its model
// and its usage by the top-level keys m.Model and m.Usage: the last member
// of each, keys decoded, as a client's JSON parser reads them, the usage
// read by readUsage (ok false: none; again: a count named twice or with
// escapes, which it tells as it reads them, where rawjson.Repeats would
// cost a third of the answer's reading).
func ReadRelayedLast(body []byte, m *Renaming, readUsage func([]byte) (_ Usage, ok, again bool)) (Relayed, bool) {
	if !Valid(body) {
		return Relayed{}, false
	}
	r := Relayed{ModelStart: -1, ModelEnd: -1, Keys: m, UsageAt: -1}
	keys := [...]rawjson.Last{{Key: m.Model}, {Key: m.Usage}}
	if rawjson.LastKeys(body, rawjson.SkipSpace(body, 0), keys[:]) < 0 {
		return r, true // JSON, if not an answer
	}
	r.Again = keys[0].Again || keys[1].Again
	if v := keys[0].At; v >= 0 {
		s, ok := rawjson.StringBytes(body[v:rawjson.ValueEnd(body, v)])
		if ok {
			r.ModelStart = v + 1
			r.ModelEnd = r.ModelStart + len(s)
		}
		r.Again = r.Again || !ok && body[v] == '"' // a name with escapes
	}
	if u := keys[1].At; u >= 0 {
		var again bool
		r.UsageAt = u
		r.Usage, r.HasUsage, again = readUsage(body[u:rawjson.ValueEnd(body, u)])
		r.Again = r.Again || again
	}
	return r, true
}

// HTTP is a style's HTTP facts, as plain data.
type HTTP struct {
	// BaseURL is the provider's own API root, as its SDK spells it: the
	// default base URL of a channel of the style. KeyEnv is the
	// environment variable the provider's SDK takes its key from, which
	// is where a channel with no keys of its own finds them.
	BaseURL, KeyEnv string
	// AuthHeader carries an upstream credential, after AuthPrefix.
	AuthHeader, AuthPrefix string
	// VersionHeader, when set, carries the API version: the channel's
	// upstream (DefaultVersion when it names none), and the client's to
	// the gateway, which also reads it as VersionAlias. Versions are the
	// ones the gateway speaks with clients.
	VersionHeader, VersionAlias, DefaultVersion string
	Versions                                    []string
	// KeyHeader and KeyQuery carry a client's key when it does not send
	// it as a bearer token; KeyHint tells a client without a key how.
	KeyHeader, KeyQuery, KeyHint string
	// OwnStatuses are the HTTP statuses only this style sends, each with
	// the standard status nearest to it, which a client of another style
	// gets instead (Anthropic's 529 overloaded: 503).
	OwnStatuses map[int]int
	// IDPrefix starts the ids the gateway makes for responses in the
	// style ("chatcmpl-", "msg_").
	IDPrefix string
	// RequestIDHeader is where an upstream of the style names its answer
	// (OpenAI's x-request-id, Anthropic's request-id; "" when it sends
	// none), which a client is told as X-Upstream-Request-Id.
	RequestIDHeader string
	// PassedHeaders are headers of an answer that a client of the style
	// gets as the upstream sent them, when it sent them (OpenAI's
	// openai-processing-ms); no other upstream header reaches a client.
	PassedHeaders []string
	// Quota names the style's quota headers; nil for a style without
	// them (Gemini's).
	Quota *QuotaHeaders
	// Path appends the path of op on an upstream for model, after the
	// base URL; ok is false when the API has no such operation.
	Path func(dst []byte, op Op, model string, stream bool) (_ []byte, ok bool)
}
