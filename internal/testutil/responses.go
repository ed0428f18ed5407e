package testutil

import (
	"fmt"
	"strings"
)

// ResponseUsage is the usage the Responses fixtures report: 12 input
// tokens (2 cached), 3 output tokens (1 of reasoning).
const ResponseUsage = `{"input_tokens":12,"input_tokens_details":{"cached_tokens":2},"output_tokens":3,` +
	`"output_tokens_details":{"reasoning_tokens":1},"total_tokens":15}`

// ResponseObject is a Responses API response object as OpenAI writes it,
// with the given id, model and status; output holds the text reply (and
// usage is set) unless the status is in_progress or queued.
func ResponseObject(id, model, status, text string) string {
	output, usage := "[]", "null"
	if status != "in_progress" && status != "queued" {
		output = `[{"id":"msg_` + id + `","type":"message","status":"completed","content":[{"type":"output_text",` +
			`"annotations":[],"logprobs":[],"text":"` + text + `"}],"role":"assistant"}]`
		usage = ResponseUsage
	}
	return `{"id":"` + id + `","object":"response","created_at":1764158400,"status":"` + status + `",` +
		`"background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,` +
		`"model":"` + model + `","output":` + output + `,"parallel_tool_calls":true,"previous_response_id":null,` +
		`"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1.0,"text":{"format":{"type":"text"}},` +
		`"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":` + usage + `,"user":null,"metadata":{}}`
}

// ResponseStream is a Responses API stream as OpenAI sends it, one event
// a typed `event:` line and a `data:` line with its sequence_number: the
// response created and in progress, a message whose text comes in the
// given deltas, and the response completed with ResponseUsage.
func ResponseStream(id, model string, deltas ...string) string {
	var b strings.Builder
	seq := 0
	event := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, rest)
		seq++
	}
	text := strings.Join(deltas, "")
	item := `"item_id":"msg_` + id + `","output_index":0,"content_index":0`
	event("response.created", `"response":`+ResponseObject(id, model, "in_progress", ""))
	event("response.in_progress", `"response":`+ResponseObject(id, model, "in_progress", ""))
	event("response.output_item.added", `"output_index":0,"item":{"id":"msg_`+id+
		`","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	event("response.content_part.added", item+`,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	for _, d := range deltas {
		event("response.output_text.delta", item+`,"delta":"`+d+`","logprobs":[]`)
	}
	event("response.output_text.done", item+`,"text":"`+text+`","logprobs":[]`)
	event("response.content_part.done", item+`,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"`+text+`"}`)
	event("response.output_item.done", `"output_index":0,"item":{"id":"msg_`+id+`","type":"message","status":"completed",`+
		`"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"`+text+`"}],"role":"assistant"}`)
	event("response.completed", `"response":`+ResponseObject(id, model, "completed", text))
	return b.String()
}
