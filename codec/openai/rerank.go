package openai

import (
	"cmp"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The rerank API (POST /rerank) that the servers compatible with Cohere's
// or Jina's share (vLLM, TEI, Infinity, Jina), which the gateway serves
// OpenAI-style clients: a query and documents in, the documents' indexes
// by relevance out. OpenAI itself has none; an OpenAI-compatible channel
// that serves it gets the client's bytes.

// The fields of a rerank request, in DecodeRerankRequest's lookup.
const (
	rrModel = iota
	rrQuery
	rrDocuments
	rrTopN
	rrReturnDocuments
	rrMaxTokensPerDoc
)

// DecodeRerankRequest reads a rerank request into r: its Model and Rerank.
// A 400 names the field at fault.
func DecodeRerankRequest(body []byte, r *codec.Request) *codec.Error {
	r.Reset()
	f := [...]rawjson.Field{{Key: "model"}, {Key: "query"}, {Key: "documents"}, {Key: "top_n"},
		{Key: "return_documents"}, {Key: "max_tokens_per_doc"}}
	// The whole body is checked, and a key given twice refused: the model
	// the allow-list checks must be the one the upstream reads.
	if err := rawjson.LookupValid(body, f[:]); err != nil {
		if !rawjson.Valid(body) {
			return invalid("", "We could not parse the JSON body of your request. (The body must be valid JSON.)")
		}
		return invalid("", err.Error()) // not an object, or a key repeated
	}
	rr := new(codec.Rerank)
	var e *codec.Error
	if r.Model, e = requiredString(body, f[rrModel]); e != nil || r.Model == "" {
		return cmp.Or(e, invalid("model", "'model' must not be empty"))
	}
	if rr.Query, e = requiredString(body, f[rrQuery]); e != nil {
		return e
	}
	if rr.Documents, e = decodeDocuments(body, f[rrDocuments]); e != nil {
		return e
	}
	if rr.TopN, e = positiveInt(body, f[rrTopN]); e != nil {
		return e
	}
	if rr.MaxTokensPerDoc, e = positiveInt(body, f[rrMaxTokensPerDoc]); e != nil {
		return e
	}
	if rr.ReturnDocuments, e = optionalBool(body, f[rrReturnDocuments]); e != nil {
		return e
	}
	r.Rerank = rr
	return nil
}

// requiredString reads the string at f.
func requiredString(body []byte, f rawjson.Field) (string, *codec.Error) {
	if f.Start < 0 {
		return "", invalid(f.Key, "Missing required parameter: '"+f.Key+"'.")
	}
	s, err := rawjson.Unquote(body[f.Start:f.End])
	if err != nil {
		return "", invalid(f.Key, "'"+f.Key+"' must be a string")
	}
	return s, nil
}

// decodeDocuments reads "documents": a non-empty array of strings and
// objects. An object is kept as it was sent, for the upstreams that take
// objects, with its "text" for those that take text only.
func decodeDocuments(body []byte, f rawjson.Field) ([]codec.Document, *codec.Error) {
	const what = "'documents' must be an array of strings or objects"
	if f.Start < 0 {
		return nil, invalid(f.Key, "Missing required parameter: 'documents'.")
	}
	var raw []sonic.NoCopyRawMessage
	if rawjson.KindOf(body[f.Start:f.End]) != rawjson.KindArray || api.Unmarshal(body[f.Start:f.End], &raw) != nil {
		return nil, invalid(f.Key, what)
	}
	if len(raw) == 0 {
		return nil, invalid(f.Key, "'documents' must not be empty")
	}
	docs := make([]codec.Document, len(raw))
	for i, d := range raw {
		var err error
		switch rawjson.KindOf(d) {
		case rawjson.KindString:
			docs[i].Text, err = rawjson.Unquote(d)
		case rawjson.KindObject:
			docs[i].Object = rawjson.UnsafeString(d)
			docs[i].Text, err = objectText(d)
		default:
			return nil, invalid(f.Key, what+": documents["+strconv.Itoa(i)+"] is neither")
		}
		if err != nil {
			return nil, invalid(f.Key, what)
		}
	}
	return docs, nil
}

// objectText is the "text" string of a document object, "" when it has
// none.
func objectText(obj []byte) (string, error) {
	t := [...]rawjson.Field{{Key: "text"}}
	if err := rawjson.Lookup(obj, t[:], false); err != nil || t[0].Start < 0 ||
		rawjson.KindOf(obj[t[0].Start:t[0].End]) != rawjson.KindString {
		return "", err
	}
	return rawjson.Unquote(obj[t[0].Start:t[0].End])
}

// positiveInt reads the integer at f, 0 when absent or null.
func positiveInt(body []byte, f rawjson.Field) (int, *codec.Error) {
	if f.Start < 0 || rawjson.KindOf(body[f.Start:f.End]) == rawjson.KindNull {
		return 0, nil
	}
	n, err := strconv.Atoi(string(body[f.Start:f.End]))
	if err != nil || n < 1 {
		return 0, invalid(f.Key, "'"+f.Key+"' must be a positive integer")
	}
	return n, nil
}

// optionalBool reads the boolean at f, false when absent or null.
func optionalBool(body []byte, f rawjson.Field) (bool, *codec.Error) {
	if f.Start < 0 {
		return false, nil
	}
	switch rawjson.KindOf(body[f.Start:f.End]) {
	case rawjson.KindTrue:
		return true, nil
	case rawjson.KindFalse, rawjson.KindNull:
		return false, nil
	}
	return false, invalid(f.Key, "'"+f.Key+"' must be a boolean")
}

// AppendRerankRequest appends r as a rerank request body, each document as
// the client sent it.
func AppendRerankRequest(dst []byte, r *codec.Request) ([]byte, *codec.Error) {
	if r.Rerank == nil {
		return dst, invalid("", "not a rerank request")
	}
	return codec.AppendRerankRequest(dst, r.Model, r.Rerank, false), nil
}

// AppendRerankResponse appends r's ranking as the rerank answer the
// clients of these servers read: the results, each with its document
// when the request (info.Request) asked for them; the usage when the
// upstream reported tokens; the upstream's meta, when it sent one.
func AppendRerankResponse(dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, cmp.Or(r.ID, info.ID))
	dst = append(dst, `,"model":`...)
	dst = rawjson.AppendString(dst, info.Model)
	dst = append(dst, `,"results":[`...)
	var docs []codec.Document
	if q := info.Request; q != nil && q.Rerank != nil && q.Rerank.ReturnDocuments {
		docs = q.Rerank.Documents
	}
	if r.Ranking != nil {
		for i, res := range r.Ranking.Results {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendRanked(dst, res, docs)
		}
	}
	dst = append(dst, ']')
	if n := r.Usage.Input; n > 0 {
		dst = append(dst, `,"usage":{"prompt_tokens":`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, `,"total_tokens":`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '}')
	}
	if r.Ranking != nil && r.Ranking.Meta != "" {
		dst = append(append(dst, `,"meta":`...), r.Ranking.Meta...)
	}
	return append(dst, '}')
}

// appendRanked appends one result, with its document when docs has it: an
// object as the client sent it, a string as {"text": …}, as Cohere and
// Jina return them.
func appendRanked(dst []byte, res codec.Ranked, docs []codec.Document) []byte {
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(res.Index), 10)
	dst = append(dst, `,"relevance_score":`...)
	dst = strconv.AppendFloat(dst, res.Score, 'g', -1, 64)
	if res.Index >= 0 && res.Index < len(docs) {
		dst = append(dst, `,"document":`...)
		if d := docs[res.Index]; d.Object != "" {
			dst = append(dst, d.Object...)
		} else {
			dst = append(rawjson.AppendString(append(dst, `{"text":`...), d.Text), '}')
		}
	}
	return append(dst, '}')
}
