package responses

import (
	"strconv"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Encoding a canonical response as a Response object. The stream encoder
// writes the same object (in response.created, response.completed…) and
// the same items (in response.output_item.added and .done) with these
// functions, so that a streamed answer and a whole one read alike.

// IDPrefix starts a response's id; its items' ids are made from the rest
// of it (msg_<rest>_<n>, rs_…, fc_…, n the item's output index).
const IDPrefix = "resp_"

// redactedPrefix starts the encrypted_content of a reasoning item that
// carries Anthropic's redacted thinking, which has no text and no
// signature of its own, only opaque data.
const redactedPrefix = "rosetta.redacted:"

// AppendResponse appends r as the Response object a client gets. The id
// is info.ID (r.ID when empty; given the prefix resp_ when it lacks it),
// created_at info.Created, the model info.Model (r.Model when empty); the
// settings echoed are info.Request's. The status is completed, or
// incomplete with its reason when the output was cut short, and then so
// is its last item, the one cut (itemStatus). Parts with no place in
// Responses output (images, documents) are left out.
func AppendResponse(dst []byte, r *codec.Response, info codec.StreamInfo) []byte {
	var o object
	o.init(&info, r.ID, r.Model)
	status, reason := statusOf(r.Stop)
	dst = o.appendHead(dst, status, reason, nil)
	dst = appendOutput(dst, r.Parts, o.items, info.Origin, status)
	return o.appendTail(dst, &r.Usage)
}

// AppendOutput appends the output items of r as a JSON array (the output
// of its Response object), for a response whose id is id and whose
// upstream is of style origin.
func AppendOutput(dst []byte, r *codec.Response, id, origin string) []byte {
	return appendOutput(dst, r.Parts, strings.TrimPrefix(id, IDPrefix), origin, Status(r.Stop))
}

// Status is the status of a response that ended for reason stop:
// completed, or incomplete.
func Status(stop codec.StopReason) string {
	status, _ := statusOf(stop)
	return status
}

// IncompleteReason is why a response that ended for reason stop is
// incomplete (its incomplete_details.reason); "" when it is not.
func IncompleteReason(stop codec.StopReason) string {
	_, reason := statusOf(stop)
	return reason
}

// statusOf is a response's status and, when incomplete, why.
func statusOf(stop codec.StopReason) (status, reason string) {
	switch stop {
	case codec.StopMaxTokens:
		return "incomplete", "max_output_tokens"
	case codec.StopContentFilter:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// object is what a Response object says of its exchange.
type object struct {
	id      string // resp_…
	items   string // the id without its prefix, which item ids share
	created int64
	model   string
	req     *codec.Request // the settings to echo; nil: the defaults
}

func (o *object) init(info *codec.StreamInfo, upstreamID, upstreamModel string) {
	o.id, o.model, o.created, o.req = info.ID, info.Model, info.Created, info.Request
	if o.id == "" {
		o.id = upstreamID
	}
	if o.model == "" {
		o.model = upstreamModel
	}
	if !strings.HasPrefix(o.id, IDPrefix) {
		o.id = IDPrefix + o.id
	}
	o.items = o.id[len(IDPrefix):]
}

// appendHead appends a Response object up to its output, which comes
// next: the status, the reason it is incomplete, the error it failed
// with.
func (o *object) appendHead(dst []byte, status, incomplete string, failure *codec.Error) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, o.id)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, o.created, 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","background":false,"error":`...)
	if failure != nil {
		dst = append(dst, `{"code":"`...)
		dst = append(dst, failureCode(failure)...)
		dst = append(dst, `","message":`...)
		dst = rawjson.AppendString(dst, failure.Message)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"incomplete_details":`...)
	if incomplete != "" {
		dst = append(dst, `{"reason":"`...)
		dst = append(dst, incomplete...)
		dst = append(dst, `"}`...)
	} else {
		dst = append(dst, "null"...)
	}
	var s codec.Session
	maxTokens := 0
	if o.req != nil {
		s, maxTokens = o.req.Session, o.req.MaxTokens
	}
	dst = append(dst, `,"instructions":`...)
	dst = rawjson.AppendStringOrNull(dst, s.Instructions)
	dst = append(dst, `,"max_output_tokens":`...)
	dst = appendIntOrNull(dst, maxTokens)
	dst = append(dst, `,"model":`...)
	dst = rawjson.AppendString(dst, o.model)
	return append(dst, `,"output":`...)
}

// failureCode is the code of a failed response's error: Responses names
// only a few.
func failureCode(e *codec.Error) string {
	if e.Kind == codec.KindRateLimitRequests || e.Kind == codec.KindRateLimitTokens {
		return "rate_limit_exceeded"
	}
	return "server_error"
}

// appendTail appends the rest of a Response object after its output: the
// settings it echoes and the usage (null when u is nil).
func (o *object) appendTail(dst []byte, u *codec.Usage) []byte {
	r := o.req
	if r == nil {
		r = &defaultRequest
	}
	dst = append(dst, `,"parallel_tool_calls":`...)
	dst = strconv.AppendBool(dst, !r.Choice.DisableParallel)
	dst = append(dst, `,"previous_response_id":`...)
	dst = rawjson.AppendStringOrNull(dst, r.Session.PreviousID)
	dst = append(dst, `,"reasoning":{"effort":`...)
	dst = rawjson.AppendStringOrNull(dst, r.Thinking.Effort)
	dst = append(dst, `,"summary":`...)
	dst = rawjson.AppendStringOrNull(dst, r.Session.ReasoningSummary)
	dst = append(dst, `},"store":`...)
	dst = strconv.AppendBool(dst, r.Session.Store)
	dst = append(dst, `,"temperature":`...)
	dst = appendFloatOrNull(dst, r.Temperature)
	dst = append(dst, `,"text":{"format":`...)
	dst = appendFormat(dst, &r.Format)
	dst = append(dst, `},"tool_choice":`...)
	dst = appendToolChoice(dst, &r.Choice)
	dst = append(dst, `,"tools":`...)
	dst = appendTools(dst, r.Tools)
	dst = append(dst, `,"top_p":`...)
	dst = appendFloatOrNull(dst, r.TopP)
	dst = append(dst, `,"truncation":"disabled","usage":`...)
	if u != nil {
		dst = AppendUsage(dst, u)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"user":`...)
	dst = rawjson.AppendStringOrNull(dst, r.User)
	dst = append(dst, `,"metadata":`...)
	if r.Session.Metadata != "" {
		dst = append(dst, r.Session.Metadata...)
	} else {
		dst = append(dst, "{}"...)
	}
	return append(dst, '}')
}

// defaultRequest is what a response echoes when its request is not
// known: the API's defaults.
var defaultRequest = codec.Request{Session: codec.Session{Store: true}}

func appendIntOrNull(dst []byte, n int) []byte {
	if n == 0 {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(n), 10)
}

func appendFloatOrNull(dst []byte, f *float64) []byte {
	if f == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, *f, 'g', -1, 64)
}

func appendFormat(dst []byte, f *codec.ResponseFormat) []byte {
	switch f.Kind {
	case codec.FormatJSON:
		return append(dst, `{"type":"json_object"}`...)
	case codec.FormatJSONSchema:
		dst = append(dst, `{"type":"json_schema","name":`...)
		dst = rawjson.AppendString(dst, f.Name)
		dst = append(dst, `,"schema":`...)
		dst = appendRawOr(dst, f.Schema, "{}")
		dst = append(dst, `,"strict":`...)
		dst = strconv.AppendBool(dst, f.Strict)
		return append(dst, '}')
	}
	return append(dst, `{"type":"text"}`...)
}

// appendRawOr appends the JSON text v, or def when v is empty.
func appendRawOr(dst []byte, v, def string) []byte {
	if v == "" {
		return append(dst, def...)
	}
	return append(dst, v...)
}

func appendToolChoice(dst []byte, c *codec.ToolChoice) []byte {
	switch c.Mode {
	case codec.ToolNone:
		return append(dst, `"none"`...)
	case codec.ToolRequired:
		return append(dst, `"required"`...)
	case codec.ToolSpecific:
		dst = append(dst, `{"type":"function","name":`...)
		dst = rawjson.AppendString(dst, c.Name)
		return append(dst, '}')
	}
	return append(dst, `"auto"`...)
}

func appendTools(dst []byte, tools []codec.Tool) []byte {
	dst = append(dst, '[')
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"function","name":`...)
		dst = rawjson.AppendString(dst, t.Name)
		dst = append(dst, `,"description":`...)
		dst = rawjson.AppendStringOrNull(dst, t.Description)
		dst = append(dst, `,"parameters":`...)
		dst = appendRawOr(dst, t.Parameters, "null")
		dst = append(dst, `,"strict":`...)
		dst = strconv.AppendBool(dst, t.Strict)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// AppendUsage appends u as a Responses usage object. The canonical counts mean
// what Responses' do: input with cached tokens, output with reasoning.
func AppendUsage(dst []byte, u *codec.Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CachedInput), 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Output), 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Reasoning), 10)
	dst = append(dst, `},"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.Total()), 10)
	return append(dst, '}')
}

// appendOutput appends the parts that are output items as a JSON array,
// the items of a response whose status is status.
func appendOutput(dst []byte, parts []codec.Part, items, origin, status string) []byte {
	last := len(parts) - 1
	for last >= 0 && !isItem(parts[last].Kind) {
		last--
	}
	dst = append(dst, '[')
	n := 0
	for i := range parts {
		p := &parts[i]
		if !isItem(p.Kind) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = appendItem(dst, p, items, n, origin, itemStatus(status, i == last))
		n++
	}
	return append(dst, ']')
}

// itemStatus is the status of an output item of a response whose status
// is status: the last item of an incomplete response is the one the limit
// (or the filter) cut, incomplete as OpenAI marks it; every other item
// was finished.
func itemStatus(status string, last bool) string {
	if last && status == "incomplete" {
		return status
	}
	return "completed"
}

// isItem reports whether a part of the kind is an output item.
func isItem(k codec.PartKind) bool {
	return k == codec.PartText || k == codec.PartThinking || k == codec.PartRedactedThinking || k == codec.PartToolCall
}

// appendItem appends p as the n-th output item, whole, with status
// (completed or incomplete) where its type has one.
func appendItem(dst []byte, p *codec.Part, items string, n int, origin, status string) []byte {
	switch p.Kind {
	case codec.PartText:
		dst = appendMessageOpen(dst, items, n, status)
		dst = appendTextPart(dst, p.Text)
		return append(dst, "]}"...)
	case codec.PartToolCall:
		return appendCall(dst, items, n, status, p.ID, p.Name, arguments(p.Arguments))
	}
	dst = appendReasoningOpen(dst, items, n)
	if p.Text != "" {
		dst = appendSummaryPart(dst, p.Text)
	}
	dst = append(dst, ']')
	return append(appendEncrypted(dst, p, origin), '}')
}

// appendEncrypted appends the encrypted_content member of a reasoning
// item, when it has one: a thinking signature, tagged with the style that
// minted it when that is not OpenAI (as codec.TagSignature, written in
// place), or redacted thinking's data after redactedPrefix.
func appendEncrypted(dst []byte, p *codec.Part, origin string) []byte {
	body := p.Signature
	if p.Kind == codec.PartRedactedThinking {
		body = p.Data
	} else if body == "" {
		return dst
	}
	dst = append(dst, `,"encrypted_content":"`...)
	switch {
	case p.Kind == codec.PartRedactedThinking:
		dst = append(dst, redactedPrefix...)
	case origin != "" && origin != codec.DialectOpenAI:
		dst = append(dst, codec.SigTag...)
		dst = rawjson.AppendEscaped(dst, origin)
		dst = append(dst, ':')
	}
	dst = rawjson.AppendEscaped(dst, body)
	return append(dst, '"')
}

// appendItemID appends an item's id as a JSON string: prefix, the
// response's id without its own prefix, and the item's output index.
func appendItemID(dst []byte, prefix, items string, n int) []byte {
	dst = append(dst, '"')
	dst = append(dst, prefix...)
	dst = rawjson.AppendEscaped(dst, items)
	dst = append(dst, '_')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '"')
}

// appendMessageOpen appends a message item up to the inside of its
// content array.
func appendMessageOpen(dst []byte, items string, n int, status string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendItemID(dst, "msg_", items, n)
	dst = append(dst, `,"type":"message","status":"`...)
	dst = append(dst, status...)
	return append(dst, `","role":"assistant","content":[`...)
}

func appendTextPart(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	dst = rawjson.AppendString(dst, text)
	return append(dst, '}')
}

// appendReasoningOpen appends a reasoning item up to the inside of its
// summary array.
func appendReasoningOpen(dst []byte, items string, n int) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendItemID(dst, "rs_", items, n)
	return append(dst, `,"type":"reasoning","summary":[`...)
}

func appendSummaryPart(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"summary_text","text":`...)
	dst = rawjson.AppendString(dst, text)
	return append(dst, '}')
}

func appendCall(dst []byte, items string, n int, status, callID, name, args string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendItemID(dst, "fc_", items, n)
	dst = append(dst, `,"type":"function_call","status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","arguments":`...)
	dst = rawjson.AppendString(dst, args)
	dst = append(dst, `,"call_id":`...)
	dst = rawjson.AppendString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = rawjson.AppendString(dst, name)
	return append(dst, '}')
}
