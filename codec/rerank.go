package codec

import (
	"errors"
	"math"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Rerank is a rerank request (OpRerank): order Documents by their
// relevance to Query.
type Rerank struct {
	Query     string
	Documents []Document
	// TopN is how many of the most relevant documents to return; 0: all.
	TopN int
	// ReturnDocuments asks for each result's document with it. Not every
	// upstream returns them (Cohere's v2 API does not), so the client's
	// dialect puts back the ones the client sent (StreamInfo.Request).
	ReturnDocuments bool
	// MaxTokensPerDoc is where long documents are cut (Cohere's
	// max_tokens_per_doc); 0: the provider's default.
	MaxTokensPerDoc int
}

// Document is one document of a rerank request: a JSON string, or an
// object such as {"text": …}.
type Document struct {
	// Text is what is ranked: the document when it is a string, the
	// string "text" of an object, else "".
	Text string
	// Object is the document as the client sent it when it is an
	// object; "" for a string.
	Object string
}

// Ranking is a rerank's answer.
type Ranking struct {
	// Results are the documents ranked, most relevant first.
	Results []Ranked
	// Meta is the upstream's own report of the request (Cohere's meta:
	// API version, billed search units, which are not tokens), JSON passed
	// on as it is; "" when there is none.
	Meta string
}

// Ranked is one document's place in a ranking.
type Ranked struct {
	Index int     // of the document in the request
	Score float64 // its relevance to the query
}

var api = sonic.Config{CaseSensitive: true, ValidateString: true}.Froze()

// rankingWire is the answer every rerank API shares: Cohere's, and that of
// the servers compatible with it or with Jina's (vLLM, TEI, Infinity).
// What else they send (documents, model) the gateway does not need.
type rankingWire struct {
	ID      string `json:"id"`
	Results *[]struct {
		Index *int     `json:"index"`
		Score *float64 `json:"relevance_score"`
	} `json:"results"`
	Meta sonic.NoCopyRawMessage `json:"meta"`
}

// DecodeRanking reads a rerank answer into r: its id, results, meta and
// the tokens it reports (RerankUsage).
func DecodeRanking(body []byte, r *Response) error {
	r.Reset()
	if !Valid(body) { // sonic's skip of the raw meta does not check it
		return ErrNotJSON
	}
	var w rankingWire
	if err := api.Unmarshal(body, &w); err != nil {
		return err
	}
	if w.Results == nil {
		return errors.New("rerank: no results")
	}
	rk := &Ranking{Results: make([]Ranked, len(*w.Results))}
	for i, res := range *w.Results {
		if res.Index == nil || *res.Index < 0 || res.Score == nil || math.IsInf(*res.Score, 0) || math.IsNaN(*res.Score) {
			return errors.New("rerank: a result needs an index and a relevance_score")
		}
		rk.Results[i] = Ranked{Index: *res.Index, Score: *res.Score}
	}
	if rawjson.KindOf(w.Meta) == rawjson.KindObject {
		rk.Meta = rawjson.UnsafeString(w.Meta)
	}
	r.ID, r.Ranking = w.ID, rk
	r.Usage, _ = RerankUsage(body)
	return nil
}

// RerankUsage reads the tokens a rerank answer reports, in whichever shape
// its server has them: "usage" with prompt_tokens or total_tokens (Jina,
// vLLM, Infinity), or Cohere's "meta" with tokens.input_tokens or
// billed_units.input_tokens; and Cohere's billed_units.search_units as
// Units. ok is false when it reports neither.
func RerankUsage(body []byte) (_ Usage, ok bool) {
	top := [...]rawjson.Field{{Key: "usage"}, {Key: "meta"}}
	if rawjson.Lookup(body, top[:], false) != nil {
		return Usage{}, false
	}
	var u Usage
	var tokens, billed bool
	u.Input, tokens = tokenCount(body, top[0], "prompt_tokens", "total_tokens")
	if m := top[1]; m.Start >= 0 && rawjson.KindOf(body[m.Start:m.End]) == rawjson.KindObject {
		meta := body[m.Start:m.End]
		f := [...]rawjson.Field{{Key: "tokens"}, {Key: "billed_units"}}
		if rawjson.Lookup(meta, f[:], false) != nil {
			return Usage{}, false
		}
		for i := 0; i < len(f) && !tokens; i++ {
			u.Input, tokens = tokenCount(meta, f[i], "input_tokens")
		}
		u.Units, billed = tokenCount(meta, f[1], "search_units")
	}
	return u, tokens || billed
}

// tokenCount reads the first of keys that the object at f in b holds as a
// count. Cohere writes its counts as doubles (15.0).
func tokenCount(b []byte, f rawjson.Field, keys ...string) (int, bool) {
	if f.Start < 0 || rawjson.KindOf(b[f.Start:f.End]) != rawjson.KindObject {
		return 0, false
	}
	obj := b[f.Start:f.End]
	for _, key := range keys {
		v := [...]rawjson.Field{{Key: key}}
		if rawjson.Lookup(obj, v[:], false) != nil || v[0].Start < 0 {
			continue
		}
		n, err := strconv.ParseFloat(string(obj[v[0].Start:v[0].End]), 64)
		if err == nil && n >= 0 && n <= math.MaxInt32 {
			return int(math.Round(n)), true
		}
	}
	return 0, false
}

// AppendRerankRequest appends the body of a rerank request for model, as
// every rerank API reads it: model, query, documents, top_n and
// max_tokens_per_doc when set. With asText each document goes as its text
// and return_documents is left out, as Cohere's v2 API wants (strings
// only, and no such field); else each goes as the client sent it, and
// return_documents when asked.
func AppendRerankRequest(dst []byte, model string, rr *Rerank, asText bool) []byte {
	dst = append(dst, `{"model":`...)
	dst = rawjson.AppendString(dst, model)
	dst = append(dst, `,"query":`...)
	dst = rawjson.AppendString(dst, rr.Query)
	dst = append(dst, `,"documents":[`...)
	for i, d := range rr.Documents {
		if i > 0 {
			dst = append(dst, ',')
		}
		if d.Object != "" && !asText {
			dst = append(dst, d.Object...)
		} else {
			dst = rawjson.AppendString(dst, d.Text)
		}
	}
	dst = append(dst, ']')
	dst = appendPositive(dst, `,"top_n":`, rr.TopN)
	if rr.ReturnDocuments && !asText {
		dst = append(dst, `,"return_documents":true`...)
	}
	dst = appendPositive(dst, `,"max_tokens_per_doc":`, rr.MaxTokensPerDoc)
	return append(dst, '}')
}

// appendPositive appends the member key (`,"name":`) with n, when n is set.
func appendPositive(dst []byte, key string, n int) []byte {
	if n <= 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), int64(n), 10)
}
