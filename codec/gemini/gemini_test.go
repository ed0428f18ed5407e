package gemini_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

func TestCallID(t *testing.T) {
	// f checks that id and sig survive EncodeCallID, in the URL-safe
	// alphabet.
	f := func(id, sig string) {
		t.Helper()
		enc := gemini.EncodeCallID(id, sig)
		for _, c := range enc {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') && sig != "" {
				t.Errorf("EncodeCallID(%q, %q) = %q: %q is not URL-safe", id, sig, enc, c)
				break
			}
		}
		if gotID, gotSig := gemini.DecodeCallID(enc); gotID != id || gotSig != sig {
			t.Errorf("DecodeCallID(EncodeCallID(%q, %q)) = %q, %q", id, sig, gotID, gotSig)
		}
	}
	f("gcall_abc_0", "")
	f("gcall_abc_0", "CikBnKamKgWmIGus+dvD/sqA")
	f("call_1", "YQ==")                 // two padding characters
	f("call_1", "YWI=")                 // one
	f("call_1", "YWJj")                 // none
	f("call_1", "not base64 at all! ✓") // the raw form
	f("call_1", "YQ")                   // unpadded: raw form
	f("call_1", "a-b_c")                // URL alphabet: raw form
	f("id_with_gsig_inside_", "c2ln")
	f("", "c2ln")
	f("toolu_01A09q90qw90lq917835lq9", strings.Repeat("Ab+/", 300))

	// Ids that only look like encoded ones are returned whole.
	g := func(id string) {
		t.Helper()
		if gotID, sig := gemini.DecodeCallID(id); gotID != id || sig != "" {
			t.Errorf("DecodeCallID(%q) = %q, %q; want it unchanged", id, gotID, sig)
		}
	}
	for _, id := range []string{"call_abc", "gsig", "gsigb", "gsigb3_abc", "gsigb3_ab_", "gsigx3_abc_id",
		"gsigb99999999999_x_y", "gsigb3_a+c_id", "gsigb1_a_id", "gsigr4_@@@@_id", "gsigb-1_a_id"} {
		g(id)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	// f checks that body is refused with a 400 naming param.
	f := func(body, param string) {
		t.Helper()
		var r codec.Request
		err := gemini.DecodeRequest([]byte(body), &r)
		if err == nil {
			t.Errorf("DecodeRequest(%s) accepted it", body)
			return
		}
		if err.Status != 400 || err.Kind != codec.KindInvalidRequest || err.Param != param {
			t.Errorf("DecodeRequest(%s) = %+v, want a 400 for %q", body, err, param)
		}
	}
	const hi = `"contents":[{"parts":[{"text":"hi"}]}]`
	f(``, "")
	f(`{`, "")
	f(`[]`, "")
	f(`{"contents":[{"parts":[{"text":"a`+"\x01"+`"}]}]}`, "")
	f(`{}`, "contents")
	f(`{"contents":[]}`, "contents")
	f(`{"contents":[{"parts":[]}]}`, "contents")
	f(`{"contents":[{"role":"system","parts":[{"text":"hi"}]}]}`, "contents.role")
	f(`{`+hi+`,"cachedContent":"cachedContents/abc"}`, "cachedContent")
	f(`{`+hi+`,"generationConfig":{"candidateCount":2}}`, "generationConfig.candidateCount")
	f(`{`+hi+`,"generationConfig":{"thinkingConfig":{"thinkingBudget":1024,"thinkingLevel":"LOW"}}}`, "generationConfig.thinkingConfig")
	f(`{`+hi+`,"generationConfig":{"thinkingConfig":{"thinkingBudget":-2}}}`, "generationConfig.thinkingConfig.thinkingBudget")
	f(`{`+hi+`,"generationConfig":{"thinkingConfig":{"thinkingLevel":"EXTREME"}}}`, "generationConfig.thinkingConfig.thinkingLevel")
	f(`{`+hi+`,"generationConfig":{"responseMimeType":"text/x.enum"}}`, "generationConfig.responseMimeType")
	f(`{`+hi+`,"generationConfig":{"responseSchema":{"type":"STRING"}}}`, "generationConfig.responseMimeType")
	f(`{`+hi+`,"generationConfig":{"responseMimeType":"application/json","responseSchema":{},"responseJsonSchema":{}}}`, "generationConfig.responseSchema")
	f(`{`+hi+`,"tools":[{"googleSearch":{}}]}`, "tools.googleSearch")
	f(`{`+hi+`,"tools":[{"codeExecution":{}}]}`, "tools.codeExecution")
	f(`{`+hi+`,"tools":[{"functionDeclarations":[{"description":"no name"}]}]}`, "tools.functionDeclarations.name")
	f(`{`+hi+`,"tools":[{"functionDeclarations":[{"name":"a","parameters":{},"parametersJsonSchema":{}}]}]}`, "tools.functionDeclarations.parameters")
	f(`{`+hi+`,"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode")
	f(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a","args":[1]}}]}]}`, "contents.parts.functionCall")
	f(`{"contents":[{"parts":[{"functionResponse":{"name":"a","response":"text"}}]}]}`, "contents.parts.functionResponse")
}

func TestDecodeRequestDetails(t *testing.T) {
	// A response that answers no call gets an orphan id; "function" is a
	// user role; server-side tool parts are dropped; topK is an integer.
	body := `{"contents":[
		{"role":"user","parts":[{"text":"go"},{"executableCode":{"language":"PYTHON","code":"1+1"}}]},
		{"role":"model","parts":[{"codeExecutionResult":{"outcome":"OUTCOME_OK"}}]},
		{"role":"function","parts":[{"functionResponse":{"name":"lost","response":{}}}]}],
		"generationConfig":{"topK":40.0,"maxOutputTokens":10}}`
	var r codec.Request
	if err := gemini.DecodeRequest([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 2 {
		t.Fatalf("got %d messages, want 2 (the model turn had nothing to carry): %+v", len(r.Messages), r.Messages)
	}
	if p := r.Messages[0].Parts; len(p) != 1 || p[0].Text != "go" {
		t.Errorf("first message: %+v", p)
	}
	res := r.Messages[1].Parts[0]
	if r.Messages[1].Role != codec.RoleUser || res.Kind != codec.PartToolResult || res.ID != "gcall_r0" || res.Name != "lost" ||
		len(res.Content) != 1 || res.Content[0].Text != "{}" {
		t.Errorf("orphan result: %+v", res)
	}
	if r.TopK == nil || *r.TopK != 40 || r.MaxTokens != 10 {
		t.Errorf("TopK %v, MaxTokens %d", r.TopK, r.MaxTokens)
	}

	// Decoding resets the request it is given.
	if err := gemini.DecodeRequest([]byte(`{"contents":[{"parts":[{"text":"x"}]}]}`), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 1 || r.TopK != nil || r.MaxTokens != 0 {
		t.Errorf("not reset: %+v", r)
	}

	// countTokens takes contents or a whole generateContentRequest.
	for _, b := range []string{`{"contents":[{"parts":[{"text":"count me"}]}]}`,
		`{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"count me"}]}]}}`} {
		if err := gemini.DecodeCountTokensRequest([]byte(b), &r); err != nil || r.Messages[0].Parts[0].Text != "count me" {
			t.Errorf("DecodeCountTokensRequest(%s): %v, %+v", b, err, r.Messages)
		}
	}
}

func TestAppendRequestErrors(t *testing.T) {
	// f checks that AppendRequest refuses r with a 400.
	f := func(name string, r codec.Request) {
		t.Helper()
		if _, _, err := gemini.AppendRequest(nil, &r); err == nil || err.Status != 400 {
			t.Errorf("%s: AppendRequest = %v, want a 400", name, err)
		}
	}
	user := func(parts ...codec.Part) codec.Message { return codec.Message{Role: codec.RoleUser, Parts: parts} }
	f("no messages", codec.Request{})
	f("only empty parts", codec.Request{Messages: []codec.Message{user(codec.Part{Kind: codec.PartText})}})
	f("a result whose call and name are unknown", codec.Request{Messages: []codec.Message{
		user(codec.Part{Kind: codec.PartToolResult, ID: "call_x", Content: []codec.Part{{Text: "1"}}})}})
	f("invalid tool schema", codec.Request{Messages: []codec.Message{user(codec.Part{Text: "hi"})},
		Tools: []codec.Tool{{Name: "t", Parameters: `{"type":`}}})
	f("invalid response schema", codec.Request{Messages: []codec.Message{user(codec.Part{Text: "hi"})},
		Format: codec.ResponseFormat{Kind: codec.FormatJSONSchema, Schema: `{"$ref":}`}})

	// A result with its own name needs no call.
	r := codec.Request{Messages: []codec.Message{user(codec.Part{Kind: codec.PartToolResult, ID: "call_x", Name: "f",
		Content: []codec.Part{{Text: "1"}}})}}
	out, _, err := gemini.AppendRequest(nil, &r)
	if err != nil || !strings.Contains(string(out), `{"functionResponse":{"id":"call_x","name":"f","response":{"output":"1"}}}`) {
		t.Errorf("AppendRequest = %s, %v", out, err)
	}
}

func TestStopReasons(t *testing.T) {
	// f checks the canonical stop reason of a response with finishReason
	// finish (and a function call when call is set).
	f := func(finish string, call bool, want codec.StopReason) {
		t.Helper()
		part := `{"text":"x"}`
		if call {
			part = `{"functionCall":{"name":"f","args":{}}}`
		}
		body := `{"candidates":[{"content":{"role":"model","parts":[` + part + `]},"finishReason":"` + finish + `"}]}`
		var resp codec.Response
		if err := gemini.DecodeResponse([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Stop != want {
			t.Errorf("finishReason %s (call %v) = %v, want %v", finish, call, resp.Stop, want)
		}
		// The stream decoder agrees.
		var d gemini.StreamDecoder
		events, err := d.Decode(nil, nil, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := events[len(events)-2]; got.Kind != codec.EventFinish || got.Stop != want {
			t.Errorf("stream: finishReason %s = %+v, want %v", finish, got, want)
		}
	}
	f("STOP", false, codec.StopEnd)
	f("STOP", true, codec.StopToolUse)
	f("MAX_TOKENS", false, codec.StopMaxTokens)
	f("MAX_TOKENS", true, codec.StopMaxTokens)
	f("CONTINUATION", false, codec.StopMaxTokens)
	for _, s := range []string{"SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"} {
		f(s, false, codec.StopContentFilter)
	}
	for _, s := range []string{"OTHER", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
		"NO_IMAGE", "IMAGE_OTHER"} {
		f(s, false, codec.StopError)
	}
	f("FINISH_REASON_UNSPECIFIED", false, codec.StopUnknown)
	f("SOMETHING_NEW", false, codec.StopUnknown)

	// And back: every canonical reason has a finishReason.
	g := func(stop codec.StopReason, want string) {
		t.Helper()
		out := gemini.AppendResponse(nil, &codec.Response{Stop: stop}, codec.StreamInfo{})
		if !strings.Contains(string(out), `"finishReason":"`+want+`"`) {
			t.Errorf("%v: %s, want finishReason %s", stop, out, want)
		}
	}
	g(codec.StopUnknown, "FINISH_REASON_UNSPECIFIED")
	g(codec.StopEnd, "STOP")
	g(codec.StopMaxTokens, "MAX_TOKENS")
	g(codec.StopSequence, "STOP")
	g(codec.StopToolUse, "STOP")
	g(codec.StopContentFilter, "SAFETY")
	g(codec.StopPause, "STOP")
	g(codec.StopError, "OTHER")
	g(codec.StopReason(200), "OTHER")
}

func TestErrors(t *testing.T) {
	// f checks the Gemini body of e.
	f := func(e codec.Error, want string) {
		t.Helper()
		if got := string(gemini.AppendError(nil, &e)); got != want {
			t.Errorf("AppendError(%+v) =\n%s, want\n%s", e, got, want)
		}
	}
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Message: "bad \"field\""},
		`{"error":{"code":400,"message":"bad \"field\"","status":"INVALID_ARGUMENT"}}`)
	f(codec.Error{Kind: codec.KindAuthentication, Message: "no key", Code: "API_KEY_INVALID"},
		`{"error":{"code":401,"message":"no key","status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`)
	f(codec.Error{Status: 403, Kind: codec.KindPermission, Message: "m"}, `{"error":{"code":403,"message":"m","status":"PERMISSION_DENIED"}}`)
	f(codec.Error{Status: 404, Kind: codec.KindNotFound, Message: "m"}, `{"error":{"code":404,"message":"m","status":"NOT_FOUND"}}`)
	f(codec.Error{Status: 413, Kind: codec.KindTooLarge, Message: "m"}, `{"error":{"code":413,"message":"m","status":"INVALID_ARGUMENT"}}`)
	f(codec.Error{Status: 429, Kind: codec.KindRateLimitTokens, Message: "m"}, `{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}`)
	f(codec.Error{Status: 500, Kind: codec.KindServer, Message: "m"}, `{"error":{"code":500,"message":"m","status":"INTERNAL"}}`)
	f(codec.Error{Status: 502, Kind: codec.KindUpstream, Message: "m"}, `{"error":{"code":502,"message":"m","status":"UNAVAILABLE"}}`)
	f(codec.Error{Status: 503, Kind: codec.KindUnavailable, Message: "m"}, `{"error":{"code":503,"message":"m","status":"UNAVAILABLE"}}`)
	f(codec.Error{Status: 503, Kind: codec.KindNotFound, Message: "no such model"}, `{"error":{"code":503,"message":"no such model","status":"NOT_FOUND"}}`)
	f(codec.Error{Status: 504, Kind: codec.KindTimeout, Message: "m"}, `{"error":{"code":504,"message":"m","status":"DEADLINE_EXCEEDED"}}`)
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Type: "FAILED_PRECONDITION", Message: "m"},
		`{"error":{"code":400,"message":"m","status":"FAILED_PRECONDITION"}}`)
	f(codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Type: "invalid_request_error", Message: "m"},
		`{"error":{"code":400,"message":"m","status":"INVALID_ARGUMENT"}}`)
	f(codec.Error{Kind: codec.ErrorKind(99)}, `{"error":{"code":500,"message":"","status":"INTERNAL"}}`)

	if got := string(gemini.AppendStreamError(nil, &codec.Error{Status: 503, Kind: codec.KindUnavailable, Message: "m"})); got !=
		"data: {\"error\":{\"code\":503,\"message\":\"m\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n" {
		t.Errorf("AppendStreamError = %q", got)
	}

	// g checks what DecodeError reads of body returned with status.
	g := func(status int, body string, want codec.Error, wantOK bool) {
		t.Helper()
		got, ok := gemini.DecodeError(status, []byte(body))
		if ok != wantOK || got != want {
			t.Errorf("DecodeError(%d, %s) = %+v, %v; want %+v, %v", status, body, got, ok, want, wantOK)
		}
	}
	g(400, string(goldentest.Read(t, "../testdata/wire/gemini/error_400.json")), codec.Error{Status: 400, Kind: codec.KindInvalidRequest,
		Type: "INVALID_ARGUMENT", Message: "Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': Cannot find field."}, true)
	g(429, string(goldentest.Read(t, "../testdata/wire/gemini/error_429.json")), codec.Error{Status: 429, Kind: codec.KindRateLimitRequests,
		Type: "RESOURCE_EXHAUSTED", Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 41.27318812s.",
		RateLimit: codec.RateLimit{RetryAfter: 41 * time.Second}}, true) // the RetryInfo detail's retryDelay
	g(400, `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
		codec.Error{Status: 400, Kind: codec.KindInvalidRequest, Type: "INVALID_ARGUMENT", Code: "API_KEY_INVALID", Message: "API key not valid."}, true)
	g(503, `[{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}]`,
		codec.Error{Status: 503, Kind: codec.KindUnavailable, Type: "UNAVAILABLE", Message: "overloaded"}, true)
	g(0, `{"error":{"message":"m","status":"PERMISSION_DENIED"}}`, codec.Error{Status: 403, Kind: codec.KindPermission, Type: "PERMISSION_DENIED", Message: "m"}, true)
	g(500, `{"error":{"message":"m"}}`, codec.Error{Status: 500, Kind: codec.KindServer, Message: "m"}, true)
	g(400, `{"error":{"type":"invalid_request_error"}}`, codec.Error{}, false)
	g(400, `{"message":"not gemini"}`, codec.Error{}, false)
	g(400, `<html>`, codec.Error{}, false)
	g(400, ``, codec.Error{}, false)

	// Both ways: what AppendError writes, DecodeError reads back.
	for k := codec.KindServer; k <= codec.KindUnavailable; k++ {
		e := codec.Error{Kind: k, Message: "m", Code: "R"}
		body := gemini.AppendError(nil, &e)
		got, ok := gemini.DecodeError(0, body)
		if !ok || got.Message != "m" || got.Code != "R" || got.Status == 0 {
			t.Errorf("kind %d: %s read back as %+v", k, body, got)
		}
	}
}

func TestPaths(t *testing.T) {
	// f checks ParsePath.
	f := func(path, model, method string, ok bool) {
		t.Helper()
		m, me, o := gemini.ParsePath(path)
		if m != model || me != method || o != ok {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want %q, %q, %v", path, m, me, o, model, method, ok)
		}
	}
	f("/v1beta/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", "generateContent", true)
	f("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini-2.5-flash", "streamGenerateContent", true)
	f("models/gemini-2.0-flash-001:countTokens", "gemini-2.0-flash-001", "countTokens", true)
	f("/v1/models/my:model:generateContent", "my:model", "generateContent", true)
	f("/v1beta/mymodels/x:generateContent", "", "", false)
	f("/v1beta/tunedModels/x:generateContent", "", "", false)
	f("/v1beta/models/:generateContent", "", "", false)
	f("/v1beta/models/x:", "", "", false)
	f("/v1beta/models/x", "", "", false)
	f("/v1beta/models/a/b:generateContent", "", "", false)
	f("/v1beta/models", "", "", false)
	f("", "", "", false)

	// g checks AppendPath.
	g := func(model string, stream bool, want string) {
		t.Helper()
		if got := string(gemini.AppendPath(nil, model, stream)); got != want {
			t.Errorf("AppendPath(%q, %v) = %q, want %q", model, stream, got, want)
		}
	}
	g("gemini-2.5-flash", false, "/v1beta/models/gemini-2.5-flash:generateContent")
	g("models/gemini-2.5-flash", true, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
	g("a b/c?d", false, "/v1beta/models/a%20b%2Fc%3Fd:generateContent")
}

func TestModelsAndCounts(t *testing.T) {
	got := gemini.AppendModelList(nil, []string{"gemini-2.5-flash", "models/fast \"one\"", "text-embedding-004", "rerank"},
		[]gemini.Methods{gemini.MethodsGenerate | gemini.MethodsEmbed, gemini.MethodsGenerate, gemini.MethodsEmbed, 0})
	want := `{"models":[` +
		`{"name":"models/gemini-2.5-flash","displayName":"gemini-2.5-flash","supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens","embedContent","batchEmbedContents"]},` +
		`{"name":"models/fast \"one\"","displayName":"fast \"one\"","supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"]},` +
		`{"name":"models/text-embedding-004","displayName":"text-embedding-004","supportedGenerationMethods":["embedContent","batchEmbedContents"]},` +
		`{"name":"models/rerank","displayName":"rerank","supportedGenerationMethods":[]}]}`
	if string(got) != want || !json.Valid(got) {
		t.Errorf("AppendModelList =\n%s, want\n%s", got, want)
	}
	if got := string(gemini.AppendModelList(nil, nil, nil)); got != `{"models":[]}` {
		t.Errorf("empty list: %s", got)
	}
	if got := string(gemini.AppendCountTokensResponse(nil, 1326)); got != `{"totalTokens":1326}` {
		t.Errorf("AppendCountTokensResponse = %s", got)
	}
}

func TestArraySplitter(t *testing.T) {
	stream := goldentest.Read(t, "../testdata/wire/gemini/stream_array.json")
	var raw []json.RawMessage
	if err := json.Unmarshal(stream, &raw); err != nil {
		t.Fatal(err)
	}
	// split frames b fed in pieces of the given sizes (cycled).
	split := func(b []byte, sizes ...int) ([]string, error) {
		var s gemini.ArraySplitter
		var buf []byte
		var elems []string
		for i, k := 0, 0; i < len(b) || len(buf) > 0; k++ {
			n := min(sizes[k%len(sizes)], len(b)-i)
			buf = append(buf, b[i:i+n]...)
			i += n
			for {
				elem, used, err := s.Next(buf)
				if err != nil {
					return elems, err
				}
				if used == 0 {
					break
				}
				if elem != nil {
					elems = append(elems, string(elem))
				}
				buf = buf[used:]
			}
			if i == len(b) && len(buf) > 0 {
				if !s.Done() {
					return elems, errIncomplete
				}
				break
			}
		}
		if !s.Done() {
			return elems, errIncomplete
		}
		return elems, nil
	}
	check := func(name string, elems []string, err error) {
		t.Helper()
		if err != nil || len(elems) != len(raw) {
			t.Fatalf("%s: %d elements, %v", name, len(elems), err)
		}
		for i := range raw {
			if elems[i] != string(raw[i]) {
				t.Fatalf("%s: element %d = %q, want %q", name, i, elems[i], raw[i])
			}
		}
	}
	elems, err := split(stream, len(stream))
	check("whole", elems, err)
	elems, err = split(stream, 1)
	check("byte by byte", elems, err)
	for k := 1; k < len(stream); k++ {
		var s gemini.ArraySplitter
		got, err := splitAt(&s, stream, k)
		check("split at "+strconv.Itoa(k), got, err)
	}

	// f checks the elements of a small stream, or its error.
	f := func(in string, want []string, wantErr bool) {
		t.Helper()
		got, err := split([]byte(in), 3, 1, 7)
		if (err != nil) != wantErr || !wantErr && strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("split(%q) = %q, %v; want %q (error %v)", in, got, err, want, wantErr)
		}
	}
	f(`[]`, nil, false)
	f(" [ ] \r\n", nil, false)
	f(`[{"a":"]}\"{"},{"b":[1,{}]}]`, []string{`{"a":"]}\"{"}`, `{"b":[1,{}]}`}, false)
	f(`{"error":{"code":500}}`, []string{`{"error":{"code":500}}`}, false) // not streamed: one object
	f(`[{"a":1}`, []string{`{"a":1}`}, true)                               // never closed
	f(`[{"a":1}}`, []string{`{"a":1}`}, true)
	f(`[1]`, nil, true)
	f(`x`, nil, true)
	f(`[{"a":1}] x`, []string{`{"a":1}`}, true)
}

var errIncomplete = errorString("incomplete")

type errorString string

func (e errorString) Error() string { return string(e) }

// splitAt frames b delivered in two reads, split at k.
func splitAt(s *gemini.ArraySplitter, b []byte, k int) ([]string, error) {
	var elems []string
	buf := append([]byte(nil), b[:k]...)
	for round := 0; round < 2; round++ {
		if round == 1 {
			buf = append(buf, b[k:]...)
		}
		for {
			elem, n, err := s.Next(buf)
			if err != nil {
				return elems, err
			}
			if n == 0 {
				break
			}
			if elem != nil {
				elems = append(elems, string(elem))
			}
			buf = buf[n:]
		}
	}
	if !s.Done() {
		return elems, errIncomplete
	}
	return elems, nil
}

// TestStreamBoundaries checks that the events of every golden SSE stream do
// not depend on where the reads split it: every split point into two reads,
// and byte by byte.
func TestStreamBoundaries(t *testing.T) {
	for base, p := range inputs(t, "stream", ".sse", "stream_sse_*.sse") {
		b := goldentest.Read(t, p)
		want := goldentest.DumpEvents(t, decodeSSE(t, b))
		for k := 0; k <= len(b); k++ {
			if got := goldentest.DumpEvents(t, decodeSSEReads(t, b, k)); !bytes.Equal(got, want) {
				t.Fatalf("%s split at %d:\n%s\nwant\n%s", base, k, got, want)
			}
		}
		if got := goldentest.DumpEvents(t, decodeSSEReads(t, b, 1, 1)); !bytes.Equal(got, want) {
			t.Fatalf("%s byte by byte:\n%s", base, got)
		}
	}
}

// decodeSSEReads decodes b delivered in reads of the given sizes (the last
// repeated), framing events as a relay does: keep a buffer, take each
// complete event.
func decodeSSEReads(t *testing.T, b []byte, sizes ...int) []codec.Event {
	t.Helper()
	var d gemini.StreamDecoder
	var events []codec.Event
	var buf []byte
	for i, k := 0, 0; i < len(b); k++ {
		n := len(b) - i
		if k < len(sizes) || len(sizes) > 1 {
			n = min(sizes[min(k, len(sizes)-1)], n)
		}
		if n == 0 {
			n = len(b) - i
		}
		buf = append(buf, b[i:i+n]...)
		i += n
		for {
			m := sse.Next(buf)
			if m == 0 {
				break
			}
			ev := buf[:m]
			if data, multi, ok := sse.Data(ev); ok {
				if multi {
					data = sse.AppendData(nil, ev)
				}
				var err error
				from := len(events)
				if events, err = d.Decode(events, nil, append([]byte(nil), data...)); err != nil {
					t.Fatal(err)
				}
				keep(events[from:])
			}
			buf = buf[m:]
		}
	}
	return d.End(events)
}

func TestStreamEncoderDetails(t *testing.T) {
	var s gemini.StreamEncoder
	s.Reset(codec.StreamInfo{ID: "fallback", Model: "public"})
	encode := func(events ...codec.Event) string {
		var out []byte
		for i := range events {
			out = s.Encode(out, &events[i])
		}
		return string(out)
	}
	// The upstream's id wins over StreamInfo.ID; the public model name over
	// the upstream's.
	got := encode(codec.Event{Kind: codec.EventStart, ID: "up", Model: "upstream-model"},
		codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: "hi"})
	if !strings.Contains(got, `"modelVersion":"public","responseId":"up"`) {
		t.Errorf("ids: %s", got)
	}
	// A call cut off by an error is not sent; the error has a default body;
	// nothing follows it.
	got = encode(codec.Event{Kind: codec.EventBlockStart, Block: codec.PartToolCall, ID: "c", Name: "f"},
		codec.Event{Kind: codec.EventDelta, Block: codec.PartToolCall, Arguments: `{"a":`},
		codec.Event{Kind: codec.EventError},
		codec.Event{Kind: codec.EventDelta, Block: codec.PartText, Text: "late"})
	if got != "data: {\"error\":{\"code\":502,\"message\":\"the upstream stream failed\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n" {
		t.Errorf("error: %q", got)
	}
	if end := s.End(nil); len(end) != 0 {
		t.Errorf("End after an error: %q", end)
	}

	// A call still open at End is dropped: an array stream of it is empty.
	s = gemini.StreamEncoder{}
	s.Reset(codec.StreamInfo{})
	got = encode(codec.Event{Kind: codec.EventBlockStart, Block: codec.PartToolCall, ID: "c", Name: "f"})
	f := gemini.Framing(true)
	arr, n := codec.Reframe(nil, []byte(got+string(s.End(nil))), f, 0)
	if arr = f.End(arr, n); string(arr) != "[\n]" {
		t.Errorf("array with a cut call: %q", arr)
	}
	if got := string(gemini.AppendError(nil, nil)); got != `{"error":{"code":500,"message":"internal error","status":"INTERNAL"}}` {
		t.Errorf("AppendError(nil) = %s", got)
	}
}

func TestCountTokensRequestAndResponse(t *testing.T) {
	var r codec.Request
	if err := gemini.DecodeRequest([]byte(`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}`), &r); err != nil {
		t.Fatal(err)
	}
	r.Model = "gemini-2.5-flash"
	out, _, err := gemini.AppendCountTokensRequest(nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"Hi"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}}`
	if string(out) != want {
		t.Errorf("count request\n got %s\nwant %s", out, want)
	}
	for body, want := range map[string]int{`{"totalTokens": 31, "promptTokensDetails": []}`: 31, `{"totalTokens":0}`: 0} {
		if n, err := gemini.DecodeCountTokensResponse([]byte(body)); n != want || err != nil {
			t.Errorf("%s: %d, %v", body, n, err)
		}
	}
	for _, body := range []string{`{}`, `{"totalTokens":"x"}`, `[1]`, `{"totalTokens":-1}`} {
		if _, err := gemini.DecodeCountTokensResponse([]byte(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}
