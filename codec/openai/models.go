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
		dst = append(dst, `{"id":`...)
		dst = rawjson.AppendString(dst, id)
		dst = append(dst, `,"object":"model","created":`...)
		dst = strconv.AppendInt(dst, created, 10)
		dst = append(dst, `,"owned_by":`...)
		dst = rawjson.AppendString(dst, ownedBy)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
