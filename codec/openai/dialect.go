package openai

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Dialect is the OpenAI Chat Completions style, as codec.Dialect.
var Dialect codec.Dialect = dialect{}

type dialect struct{}

var httpFacts = codec.HTTP{
	Quota:           &quotaHeaders,
	IDPrefix:        "chatcmpl-",
	BaseURL:         "https://api.openai.com/v1",
	KeyEnv:          "OPENAI_API_KEY",
	AuthHeader:      "Authorization",
	AuthPrefix:      "Bearer ",
	KeyHint:         "Send it as 'Authorization: Bearer <key>'.",
	RequestIDHeader: "X-Request-Id",
	PassedHeaders:   []string{"Openai-Processing-Ms"},
	Path: func(dst []byte, op codec.Op, model string, _ bool) ([]byte, bool) {
		switch op {
		case codec.OpGenerate:
			return append(dst, "/chat/completions"...), true
		case codec.OpComplete:
			return append(dst, "/completions"...), true
		case codec.OpEmbed:
			return append(dst, "/embeddings"...), true
		case codec.OpRerank:
			return append(dst, "/rerank"...), true
		}
		if p := mediaPaths[op]; p != "" {
			return append(dst, p...), true
		}
		if p, ok := responsesPaths[op]; ok {
			return appendResponsesPath(dst, p, model), true
		}
		return dst, false // OpenAI has no token count
	},
}

// mediaPaths are the paths of the media operations, relayed as they are,
// and of the realtime session.
var mediaPaths = map[codec.Op]string{
	codec.OpImage: "/images/generations", codec.OpImageEdit: "/images/edits", codec.OpImageVariation: "/images/variations",
	codec.OpSpeech: "/audio/speech", codec.OpTranscribe: "/audio/transcriptions", codec.OpTranslate: "/audio/translations",
	codec.OpRealtime: "/realtime", // a WebSocket: the gateway dials it as ws(s)://
}

func (dialect) Name() string      { return "openai" }
func (dialect) HTTP() *codec.HTTP { return &httpFacts }

func (dialect) DecodeRequest(op codec.Op, body []byte, r *codec.Request, _ codec.Options) *codec.Error {
	switch op {
	case codec.OpGenerate:
		return DecodeRequest(body, r)
	case codec.OpEmbed:
		return DecodeEmbeddingsRequest(body, r)
	case codec.OpRerank:
		return DecodeRerankRequest(body, r)
	}
	return unsupported(op)
}

func (dialect) AppendRequest(op codec.Op, dst []byte, r *codec.Request, _ codec.Options) ([]byte, []string, *codec.Error) {
	switch op {
	case codec.OpGenerate:
		return AppendRequest(dst, r)
	case codec.OpEmbed:
		out, dropped := AppendEmbeddingsRequest(dst, r)
		return out, dropped, nil
	case codec.OpRerank:
		out, e := AppendRerankRequest(dst, r)
		return out, nil, e
	}
	return dst, nil, unsupported(op)
}

func (dialect) DecodeResponse(op codec.Op, body []byte, r *codec.Response) error {
	switch op {
	case codec.OpGenerate:
		return DecodeResponse(body, r)
	case codec.OpEmbed:
		return DecodeEmbeddingsResponse(body, r)
	case codec.OpRerank:
		return codec.DecodeRanking(body, r)
	}
	return unsupported(op)
}

func (dialect) AppendResponse(op codec.Op, dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	switch op {
	case codec.OpEmbed:
		return AppendEmbeddings(dst, info.Model, r.Vectors, info.Request != nil && info.Request.Embed.Base64, r.Usage)
	case codec.OpRerank:
		return AppendRerankResponse(dst, r, info)
	}
	return AppendResponse(dst, r, info)
}

func (dialect) NewStreamDecoder() codec.StreamDecoder { return new(StreamDecoder) }
func (dialect) NewStreamEncoder() codec.StreamEncoder { return new(StreamEncoder) }

func (dialect) AppendError(dst []byte, e *codec.Error) []byte       { return AppendError(dst, e) }
func (dialect) AppendStreamError(dst []byte, e *codec.Error) []byte { return AppendStreamError(dst, e) }
func (dialect) DecodeError(status int, body []byte) (codec.Error, bool) {
	return DecodeError(status, body)
}

func (dialect) AppendModelList(dst []byte, ids []string, created int64) []byte {
	return AppendModelList(dst, ids, created, "rosetta")
}

func (dialect) AppendModel(dst []byte, id string, created int64) []byte {
	return AppendModel(dst, id, created, "rosetta")
}

func (dialect) Tagged(body []byte) bool { return codec.HasSignatureTags(body) }

func (dialect) AppendModelRequest(dst, body []byte, model string) []byte {
	return rawjson.AppendReplaced(dst, body, "model", model)
}

// ReadRelayed checks a whole response and finds its top-level model and
// usage in one pass: the usage object is read as it is checked.
func (dialect) ReadRelayed(body []byte) (codec.Relayed, bool) { return readRelayed(body, &chatUsage) }

// readRelayed is ReadRelayed for an answer whose usage has the keys k: the
// last top-level members named model and usage count, keys with escapes
// as they decode, as a client's JSON parser reads them; an answer on which
// readers differ is reported Again (codec.Relayed).
func readRelayed(body []byte, k *usageKeys) (codec.Relayed, bool) {
	r := codec.Relayed{ModelStart: -1, ModelEnd: -1, Keys: &relayedKeys, UsageAt: -1}
	if i := rawjson.SkipSpace(body, 0); i < len(body) && body[i] != '{' {
		return r, rawjson.Valid(body) // JSON, if not an answer of this API
	}
	model := -1
	end := rawjson.Object(body, 1, relayedLens, func(key []byte, v int, plain bool) int {
		if !plain {
			key = unescaped(key, relayedNames)
		}
		switch string(key) {
		case "model":
			r.Again = r.Again || model >= 0 || !plain
			model = v // checked by Object
		case "usage":
			r.Again = r.Again || r.UsageAt >= 0 || !plain
			r.Usage, r.HasUsage, r.UsageAt = codec.Usage{}, false, v // a usage before is not read
			if v >= len(body) || body[v] != '{' {
				break
			}
			u, end, err := readUsage(body[v:], 2, k, &r.Again)
			if end < 0 {
				return end
			}
			if err == nil {
				r.Usage, r.HasUsage = u, true
			}
			return v + end
		}
		return 0
	})
	if end < 0 || rawjson.SkipSpace(body, end) != len(body) {
		return codec.Relayed{}, false
	}
	if model >= 0 {
		r.ModelStart, r.ModelEnd = modelSpanAt(body, model)
		r.Again = r.Again || r.ModelStart < 0 && body[model] == '"' // a name with escapes
	}
	return r, true
}

// relayedKeys are the keys of a whole answer's model and usage, for
// codec.Relayed.AppendRelayed.
var relayedKeys = codec.Renaming{Model: "model", Usage: "usage"}

// relayedLens are the lengths of the members readRelayed reads, relayedNames
// their names.
var (
	relayedLens  = rawjson.KeyLengths("model", "usage")
	relayedNames = [][]byte{[]byte("model"), []byte("usage")}
)

// DecodesRelayed is false: RelayEvent reads a chunk's usage in place.
func (dialect) DecodesRelayed() bool { return false }

// relayKeys are the keys RelayEvent has the JSON check find: the first
// "content" (a text delta's, the string that varies from chunk to chunk:
// rawjson.Shape), the first "model", and the top-level "usage" and
// "choices" (relayTop). Where each of the last three is a top-level key
// named once without escapes (chunkKeys), these are the members a client
// reads.
var relayKeys = []string{"content", "model", "usage", "choices"}

const relayTop = 1<<2 | 1<<3

// The top-level members RelayEvent reads, as rawjson.LastKeys finds them.
const (
	lastModel = iota
	lastUsage
	lastChoices
)

// RelayEvent checks that the chunk is JSON (through the stream's
// rawjson.Shape: a text delta like the one before costs a check of its
// text), reads the usage of the chunk that reports it, and leaves that
// chunk out when the gateway asked for it for itself (the client did not
// set stream_options.include_usage; see ChatRequest.AppendUpstream): a
// chunk with a top-level usage object and no choices. The usage and
// choices read are the last top-level members so named, keys decoded, as
// a client's JSON parser reads them; every top-level model is renamed.
func (dialect) RelayEvent(dst, ev, data []byte, r *codec.Relay) ([]byte, error) {
	var at [4]int
	before, _ := r.Shape.Matched()
	if !r.Shape.ValidKeys(data, relayKeys, at[:], relayTop) {
		return dst, codec.ErrNotJSON
	}
	if kept, same := r.Shape.Matched(); !same || kept != r.PlainKeys {
		var keys [3]rawjson.Last
		if !plainChunk(data, &at, r, before, &keys) {
			return relayRead(dst, ev, data, r, &keys), nil // the keys walked once
		}
	}
	if at[2] >= 0 && data[at[2]] == '{' && rawjson.Repeats(data[at[2]:]) {
		var keys [3]rawjson.Last
		chunkKeys(data, &at, &keys)
		return relayRead(dst, ev, data, r, &keys), nil
	}
	if u := at[2]; u >= 0 && data[u] == '{' {
		if usage, err := DecodeUsage(data[u:]); err == nil {
			r.Usage = usage
		}
		if !r.IncludeUsage && emptyArrayAt(data, at[3]) {
			return dst, nil
		}
	}
	return appendModelAt(dst, ev, data, r.Model, at[1]), nil
}

// plainChunk reports whether the chunk data, whose check found the
// members of relayKeys at at, names each of model, usage and choices once
// at most, without escapes, where the check found it; Shape kept the
// chunk when its number of the kept document changed from before, and
// r.PlainKeys is then that number, when it is plain. The keys found are
// left in keys, for a chunk that is not plain.
func plainChunk(data []byte, at *[4]int, r *codec.Relay, before uint32, keys *[3]rawjson.Last) bool {
	plain := chunkKeys(data, at, keys)
	if kept, same := r.Shape.Matched(); plain && !same && kept != before {
		r.PlainKeys = kept
	}
	return plain
}

// chunkKeys reads the top-level keys of the valid chunk data, whose check
// found the members of relayKeys at at: plain reports whether each of
// model, usage and choices is named once at most, without escapes, and
// where the check found it (the first model, at any depth, is the
// top-level one).
func chunkKeys(data []byte, at *[4]int, keys *[3]rawjson.Last) (plain bool) {
	keys[0].Key, keys[1].Key, keys[2].Key = "model", "usage", "choices"
	rawjson.LastKeys(data, 0, keys[:])
	for k, l := range keys {
		if l.Again || l.At != at[k+1] {
			return false
		}
	}
	return true
}

// relayRead is RelayEvent for a chunk whose members are named more than
// once or with escapes, or whose usage object repeats a key: the last
// usage and choices count, and the chunk is made one that every JSON
// parser reads alike, the ones that take the first of a repeated key
// (OpenAI's Go SDK) and the ones that take the last (encoding/json,
// Python, JavaScript, and the gateway): every top-level model that is a
// string renamed, every top-level usage made the last one as the latter
// read it (rawjson.AppendLast).
func relayRead(dst, ev, data []byte, r *codec.Relay, keys *[3]rawjson.Last) []byte {
	u := keys[lastUsage].At
	if u >= 0 && data[u] == '{' {
		if usage, err := DecodeUsage(data[u:]); err == nil {
			r.Usage = usage
		}
		if !r.IncludeUsage && emptyArrayAt(data, keys[lastChoices].At) {
			return dst
		}
	}
	var edits [2]codec.Edit
	n := 0
	if r.Model != "" {
		edits[n] = codec.Edit{Path: modelPath, Name: r.Model}
		n++
	}
	if keys[lastUsage].Again || u >= 0 && data[u] == '{' && rawjson.Repeats(data[u:]) {
		edits[n] = codec.Edit{Path: usagePath, JSON: rawjson.AppendLast(nil, data[u:rawjson.ValueEnd(data, u)])}
		n++
	}
	if n == 0 {
		return append(dst, ev...)
	}
	return codec.AppendEdited(dst, ev, data, edits[:n])
}

// emptyArrayAt reports whether the valid JSON b has an empty array at v
// (-1: none).
func emptyArrayAt(b []byte, v int) bool {
	if v < 0 || b[v] != '[' {
		return false
	}
	j := rawjson.SkipSpace(b, v+1)
	return j < len(b) && b[j] == ']'
}

// appendModelAt appends ev with the model name whose value starts at
// data[v] (-1: none) replaced by model (as it stands between quotes); ev
// as it is when model is "". data must be a subslice of ev, checked JSON,
// whose only top-level model is at v.
func appendModelAt(dst, ev, data []byte, model string, v int) []byte {
	if model == "" || v < 0 || data[v] != '"' {
		return append(dst, ev...)
	}
	s, e := modelSpanAt(data, v)
	if s < 0 { // a name with escapes
		return codec.AppendEdited(dst, ev, data, []codec.Edit{{Path: modelPath, Name: model}})
	}
	off := cap(ev) - cap(data)
	dst = append(dst, ev[:off+s]...)
	dst = append(dst, model...)
	return append(dst, ev[off+e:]...)
}

// modelPath and usagePath name a chunk's model and usage for
// codec.AppendEdited.
var modelPath, usagePath = []string{"model"}, []string{"usage"}

func unsupported(op codec.Op) *codec.Error {
	return &codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "This API has no " + op.String() + " endpoint."}
}
