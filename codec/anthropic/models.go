package anthropic

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// AppendModelList appends a GET /v1/models answer in Anthropic's shape:
// {"data":[{"type":"model","id","display_name","created_at"}…],"has_more":false,
// "first_id","last_id"}. The gateway knows no display names, so each is the
// id; created is a Unix time in seconds, written as RFC 3339 in UTC.
func AppendModelList(dst []byte, ids []string, created int64) []byte {
	var ts [32]byte
	stamp := createdAt(ts[:0], created)
	dst = append(dst, `{"data":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendModel(dst, id, stamp)
	}
	dst = append(dst, `],"has_more":false,"first_id":`...)
	if len(ids) == 0 {
		return append(dst, `null,"last_id":null}`...)
	}
	dst = rawjson.AppendString(dst, ids[0])
	dst = append(dst, `,"last_id":`...)
	dst = rawjson.AppendString(dst, ids[len(ids)-1])
	return append(dst, '}')
}

// AppendModel appends one model object in Anthropic's shape, as
// GET /v1/models/{model} answers it and AppendModelList lists it:
// {"type":"model","id","display_name","created_at"}.
func AppendModel(dst []byte, id string, created int64) []byte {
	var ts [32]byte
	return appendModel(dst, id, createdAt(ts[:0], created))
}

// createdAt appends created, a Unix time in seconds, as RFC 3339 in UTC.
func createdAt(dst []byte, created int64) []byte {
	return time.Unix(created, 0).UTC().AppendFormat(dst, time.RFC3339)
}

// appendModel appends a model object with its created_at already
// formatted.
func appendModel(dst []byte, id string, stamp []byte) []byte {
	dst = append(dst, `{"type":"model","id":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"display_name":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"created_at":"`...)
	dst = append(dst, stamp...)
	return append(dst, `"}`...)
}

// AppendCountTokensResponse appends a count_tokens answer:
// {"input_tokens":n}.
func AppendCountTokensResponse(dst []byte, n int) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '}')
}

// DecodeCountTokensResponse reads an upstream's count_tokens answer.
func DecodeCountTokensResponse(body []byte) (int, error) {
	var w struct {
		InputTokens int `json:"input_tokens"`
	}
	w.InputTokens = -1
	if err := unmarshal(body, &w); err != nil {
		return 0, fmt.Errorf("anthropic: cannot decode count_tokens response: %w", err)
	}
	if w.InputTokens < 0 {
		return 0, fmt.Errorf("anthropic: count_tokens response has no input_tokens")
	}
	return w.InputTokens, nil
}
