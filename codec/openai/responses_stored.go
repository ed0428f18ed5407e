package openai

import (
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The answers the gateway writes itself for a response it keeps (one it
// translated): the response on a GET, its input items, its deletion.

// StoredResponse is a response the gateway keeps, as a GET answers it.
type StoredResponse struct {
	ID, Model, Status string
	// Incomplete is why an incomplete one stopped short
	// (incomplete_details.reason); "": incomplete_details is null.
	Incomplete string
	Created    int64 // Unix seconds
	// Output and Usage are its output items (a JSON array) and its usage
	// (a JSON object), as stored; nil: none.
	Output, Usage []byte
}

// AppendStoredResponse appends r as a response object.
func AppendStoredResponse(dst []byte, r *StoredResponse) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, r.ID)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, r.Created, 10)
	dst = append(dst, `,"status":`...)
	dst = rawjson.AppendString(dst, r.Status)
	dst = append(dst, `,"error":null,"incomplete_details":`...)
	if r.Incomplete != "" {
		dst = append(dst, `{"reason":`...)
		dst = rawjson.AppendString(dst, r.Incomplete)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"model":`...)
	dst = rawjson.AppendString(dst, r.Model)
	dst = append(dst, `,"output":`...)
	dst = appendRawOr(dst, r.Output, "[]")
	dst = append(dst, `,"store":true,"usage":`...)
	dst = appendRawOr(dst, r.Usage, "null")
	return append(dst, '}')
}

func appendRawOr(dst, raw []byte, none string) []byte {
	if len(raw) == 0 {
		return append(dst, none...)
	}
	return append(dst, raw...)
}

// AppendDeletedResponse appends the answer to the deletion of response id.
func AppendDeletedResponse(dst []byte, id string) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, id)
	return append(dst, `,"object":"response","deleted":true}`...)
}

// ItemPage is a page of a response's input items, as the query of GET
// /responses/{id}/input_items asks for it.
type ItemPage struct {
	Limit int  // 1 to 100; default 20
	Desc  bool // newest first (order=desc, the default)
	// After and Before are item ids the page starts after or ends
	// before, in its order; "" for none.
	After, Before string
}

// ParseItemPage reads the query parameters of an input items listing.
func ParseItemPage(limit, order, after, before []byte) (ItemPage, *codec.Error) {
	p := ItemPage{Limit: 20, Desc: true, After: string(after), Before: string(before)}
	if len(limit) > 0 {
		n, err := strconv.Atoi(string(limit))
		if err != nil || n < 1 || n > 100 {
			return p, invalid("limit", "Invalid 'limit': expected an integer between 1 and 100.")
		}
		p.Limit = n
	}
	switch string(order) {
	case "", "desc":
	case "asc":
		p.Desc = false
	default:
		return p, invalid("order", "Invalid 'order': expected 'asc' or 'desc'.")
	}
	return p, nil
}

// AppendItemPage appends the page p of items (a JSON array of items in
// the order they were given) as OpenAI lists them: {"object":"list",
// "data":[…],"first_id","last_id","has_more"}.
func AppendItemPage(dst, items []byte, p ItemPage) ([]byte, error) {
	var list []sonic.NoCopyRawMessage
	if len(items) > 0 {
		if err := sonic.Unmarshal(items, &list); err != nil {
			return dst, err
		}
	}
	ids := make([]string, len(list))
	order := make([]int, len(list))
	for i := range list {
		id, _ := ResponseState(list[i])
		ids[i] = string(id)
		order[i] = i
		if p.Desc {
			order[i] = len(list) - 1 - i
		}
	}
	from, to := 0, len(order)
	for k, i := range order {
		if p.After != "" && ids[i] == p.After {
			from = k + 1
		}
		if p.Before != "" && ids[i] == p.Before {
			to = k
		}
	}
	page := order[from:max(from, to)]
	more := len(page) > p.Limit
	page = page[:min(len(page), p.Limit)]
	dst = append(dst, `{"object":"list","data":[`...)
	for k, i := range page {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, list[i]...)
	}
	dst = append(dst, `],"first_id":`...)
	first, last := "", ""
	if len(page) > 0 {
		first, last = ids[page[0]], ids[page[len(page)-1]]
	}
	dst = rawjson.AppendStringOrNull(dst, first)
	dst = append(dst, `,"last_id":`...)
	dst = rawjson.AppendStringOrNull(dst, last)
	dst = append(dst, `,"has_more":`...)
	dst = strconv.AppendBool(dst, more)
	return append(dst, '}'), nil
}
