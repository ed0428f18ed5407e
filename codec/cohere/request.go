package cohere

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec"
)

// AppendRerankRequest appends r as the body of Cohere's v2 rerank: model,
// query, the documents as strings (v2 takes text only: an object goes as
// its "text"), top_n and max_tokens_per_doc. v2 has no return_documents:
// the client's dialect puts the documents back (codec.StreamInfo.Request).
func AppendRerankRequest(dst []byte, r *codec.Request) ([]byte, *codec.Error) {
	if r.Rerank == nil {
		return dst, invalid("", "not a rerank request")
	}
	for i, d := range r.Rerank.Documents {
		if d.Object != "" && d.Text == "" {
			return dst, invalid("documents", "documents["+strconv.Itoa(i)+"] has no 'text': Cohere ranks text only")
		}
	}
	return codec.AppendRerankRequest(dst, r.Model, r.Rerank, true), nil
}

func invalid(param, msg string) *codec.Error {
	return &codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Param: param, Message: msg}
}
