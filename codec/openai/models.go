package openai

import (
	"strconv"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// AppendModelList appends a model list in OpenAI's shape.
func AppendModelList(dst []byte, ids []string, created int64, ownedBy string) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendModel(dst, id, created, ownedBy)
	}
	return append(dst, "]}"...)
}

// AppendModel appends one model object in OpenAI's shape, as
// GET /v1/models/{model} answers it and AppendModelList lists it:
// {"id","object":"model","created","owned_by"}.
func AppendModel(dst []byte, id string, created int64, ownedBy string) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"object":"model","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"owned_by":`...)
	dst = rawjson.AppendString(dst, ownedBy)
	return append(dst, '}')
}
