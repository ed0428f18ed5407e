package openai_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// msgs is a valid messages member for the short cases below.
const msgs = `"messages":[{"role":"user","content":"hi"}]`

func TestParse(t *testing.T) {
	f := func(body, model string, stream, includeUsage bool) {
		t.Helper()
		var r openai.ChatRequest
		if err := r.Parse([]byte(body)); err != nil {
			t.Fatalf("Parse(%s): %v", body, err)
		}
		if string(r.Model) != model || r.Stream != stream || r.IncludeUsage != includeUsage {
			t.Fatalf("Parse(%s) = model %q, stream %v, include usage %v; want %q, %v, %v",
				body, r.Model, r.Stream, r.IncludeUsage, model, stream, includeUsage)
		}
	}
	f(`{"model":"gpt-4o",`+msgs+`}`, "gpt-4o", false, false)
	f(" \r\n\t{ \"model\" : \"gpt-4o\" ,\n "+msgs+" }\n", "gpt-4o", false, false)
	f(`{`+msgs+`,"model":"gpt-4o"}`, "gpt-4o", false, false)
	f(`{"tools":[{"function":{"parameters":{"properties":{"model":{"type":"string"}}}}}],`+msgs+`,"model":"top"}`, "top", false, false)
	f(`{"metadata":{"model":"inner"},"model":"top",`+msgs+`}`, "top", false, false)

	// Escaped names are unescaped, long ones too.
	f(`{"model":"gpt\u002d4o",`+msgs+`}`, "gpt-4o", false, false)
	f(`{"model":"a\/b \"c\" \u00e9\ud83d\ude00",`+msgs+`}`, `a/b "c" é😀`, false, false)
	f(`{"model":"`+strings.Repeat(`\u0061`, 100)+`",`+msgs+`}`, strings.Repeat("a", 100), false, false)
	f(`{"mod\u0065l":"x",`+msgs+`}`, "x", false, false)

	// stream and stream_options.
	f(`{"model":"m",`+msgs+`,"stream":true}`, "m", true, false)
	f(`{"model":"m",`+msgs+`,"stream":false}`, "m", false, false)
	f(`{"model":"m",`+msgs+`,"stream":null}`, "m", false, false)
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":null}`, "m", true, false)
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":{}}`, "m", true, false)
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":{"include_usage":false}}`, "m", true, false)
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":{"include_usage":"true"}}`, "m", true, false)
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`, "m", true, true)
	f(`{"stream_options":{"a":[1],"include_usage" : true},"stream":true,"model":"m",`+msgs+`}`, "m", true, true)
	f(`{"model":"m",`+msgs+`,"stream_options":{"include_usage":true}}`, "m", false, true)
}

func TestParseReuse(t *testing.T) {
	var r openai.ChatRequest
	if err := r.Parse([]byte(`{"model":"gpt\u002d4o",` + msgs + `,"stream":true,"stream_options":{"include_usage":true}}`)); err != nil {
		t.Fatal(err)
	}
	if r.Parse([]byte(`{"model":"x"}`)) == nil || r.Stream || r.IncludeUsage {
		t.Fatalf("a failed Parse left stream %v, include usage %v", r.Stream, r.IncludeUsage)
	}
	body := []byte(`{"model":"plain",` + msgs + `}`)
	if err := r.Parse(body); err != nil {
		t.Fatal(err)
	}
	if string(r.Model) != "plain" || r.Stream || r.IncludeUsage {
		t.Fatalf("Parse = %q, %v, %v; want plain, false, false", r.Model, r.Stream, r.IncludeUsage)
	}
	// A name without escapes points into the body, as documented.
	if &r.Model[0] != &body[len(`{"model":"`)] {
		t.Error("Model is a copy, want a subslice of the body")
	}
}

func TestParseError(t *testing.T) {
	// f checks that Parse rejects body with a 400 invalid-request error on param
	// ("*" accepts any param).
	f := func(body, param string) {
		t.Helper()
		var r openai.ChatRequest
		err := r.Parse([]byte(body))
		switch {
		case err == nil:
			t.Errorf("Parse(%q) succeeded (model %q), want an error on %q", body, r.Model, param)
		case err.Status != 400 || err.Kind != codec.KindInvalidRequest || err.Message == "":
			t.Errorf("Parse(%q) = %+v, want a 400 invalid request with a message", body, *err)
		case param != "*" && err.Param != param:
			t.Errorf("Parse(%q) names param %q, want %q (%s)", body, err.Param, param, err.Message)
		}
	}
	// Not JSON, or not an object.
	f(``, "")
	f(`{`, "")
	f(`{"model":"m",`+msgs, "")
	f(`{"model":"m",`+msgs+`,}`, "")
	f(`{"model":"m",`+msgs+`}{}`, "")
	f(`{'model':'m'}`, "")
	f(`[{"model":"m",`+msgs+`}]`, "")
	f(`"model"`, "")
	f(`null`, "")
	f(`42`, "")

	// model.
	f(`{`+msgs+`}`, "model")
	f(`{"model":null,`+msgs+`}`, "model")
	f(`{"model":4,`+msgs+`}`, "model")
	f(`{"model":["gpt-4o"],`+msgs+`}`, "model")
	f(`{"model":{"name":"gpt-4o"},`+msgs+`}`, "model")
	f(`{"model":"",`+msgs+`}`, "model")
	f(`{"Model":"gpt-4o",`+msgs+`}`, "model")
	f(`{"model":"gpt\x",`+msgs+`}`, "*") // an invalid escape

	// messages.
	f(`{"model":"m"}`, "messages")
	f(`{"model":"m","messages":null}`, "messages")
	f(`{"model":"m","messages":{"role":"user"}}`, "messages")
	f(`{"model":"m","messages":"hi"}`, "messages")
	f(`{"model":"m","messages":[]}`, "messages")
	f(`{"model":"m","messages":[ ]}`, "messages")

	// stream and stream_options.
	f(`{"model":"m",`+msgs+`,"stream":"true"}`, "stream")
	f(`{"model":"m",`+msgs+`,"stream":1}`, "stream")
	f(`{"model":"m",`+msgs+`,"stream":{}}`, "stream")
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":true}`, "stream_options")
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":[]}`, "stream_options")
	f(`{"model":"m",`+msgs+`,"stream":true,"stream_options":"include_usage"}`, "stream_options")

	// A repeated key, in any spelling: the gateway would read one value and the
	// upstream (which keeps the last, like encoding/json) another.
	f(`{"model":"a","model":"b",`+msgs+`}`, "")
	f(`{"model":"a","mod\u0065l":"b",`+msgs+`}`, "")
	f(`{"model":"a",`+msgs+`,"messages":[]}`, "")
	f(`{"stream":false,"model":"a",`+msgs+`,"stream":true}`, "")
}

// Repeated keys after the four that Parse reads must be rejected too: with
// all four present, Lookup(…, all=false) stops before it sees them.
func TestParseDuplicateAfterAllFields(t *testing.T) {
	for _, body := range []string{
		// The allow-list would check "cheap"; the upstream would serve "expensive".
		`{"model":"cheap",` + msgs + `,"stream":false,"stream_options":null,"model":"expensive"}`,
		// The gateway would see no stream (and not ask for usage); the upstream streams.
		`{"model":"m",` + msgs + `,"stream":false,"stream_options":null,"stream":true}`,
		// The gateway would see include_usage and leave it; the upstream reads false
		// and sends no usage, so the tokens go uncounted.
		`{"model":"m",` + msgs + `,"stream":true,"stream_options":{"include_usage":true,"include_usage":false}}`,
	} {
		var r openai.ChatRequest
		if err := r.Parse([]byte(body)); err == nil {
			t.Errorf("Parse(%s) succeeded (model %q, stream %v, include usage %v), want a duplicate-key error",
				body, r.Model, r.Stream, r.IncludeUsage)
		}
	}
}

// Parse must reject what is not JSON (DESIGN §3: malformed JSON is a 400), but
// sonic.Valid does not look inside strings.
func TestParseInvalidStrings(t *testing.T) {
	for _, body := range []string{
		"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\x01b\"}]}", // a control character
		"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"line\nbreak\"}]}",
		`{"model":"m","messages":[{"role":"user","content":"\x41"}]}`, // an invalid escape
		`{"model":"m","messages":[{"role":"user","content":"\u00"}]}`,
	} {
		if json.Valid([]byte(body)) {
			t.Fatalf("%q is valid JSON", body)
		}
		var r openai.ChatRequest
		if err := r.Parse([]byte(body)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an invalid JSON error", body)
		}
	}
}

// Parse accepts what encoding/json accepts: nesting to its limit of 10000
// (sonic.Valid, which Parse used before, stopped at 4096), not one more.
func TestParseNesting(t *testing.T) {
	body := func(d int) []byte {
		return []byte(`{"model":"m",` + msgs + `,"metadata":` + strings.Repeat("[", d) + strings.Repeat("]", d) + `}`)
	}
	for _, d := range []int{4097, 9999} {
		var r openai.ChatRequest
		if err := r.Parse(body(d)); err != nil || string(r.Model) != "m" {
			t.Errorf("Parse(a body nested %d deep) = %v, model %q", d+1, err, r.Model)
		}
	}
	var r openai.ChatRequest
	if b := body(10000); json.Valid(b) {
		t.Fatal("encoding/json takes 10001 levels")
	} else if err := r.Parse(b); err == nil || !strings.Contains(err.Message, "valid JSON") {
		t.Errorf("Parse(a body nested 10001 deep) = %v, want the invalid JSON error", err)
	}
}

// Parse's messages for a body that is JSON but not a request name the
// problem, as Lookup's did when Parse checked the JSON in a pass of its own.
func TestParseMessages(t *testing.T) {
	for body, want := range map[string]string{
		`{"model":"a","model":"b",` + msgs + `}`: `invalid JSON at offset 13: duplicate key "model"`,
		`[{"model":"m",` + msgs + `}]`:           `invalid JSON at offset 0: want a JSON object`,
		`{"model":"a\x",` + msgs + `}`:           `We could not parse the JSON body of your request. (The body must be valid JSON.)`,
		"{\"model\":\"a\",\"x\":\"\x00\"}":       `We could not parse the JSON body of your request. (The body must be valid JSON.)`,
	} {
		var r openai.ChatRequest
		if err := r.Parse([]byte(body)); err == nil || err.Message != want {
			t.Errorf("Parse(%q) = %v, want %q", body, err, want)
		}
	}
}

func TestAppendUpstream(t *testing.T) {
	f := func(body, model, want string) {
		t.Helper()
		var r openai.ChatRequest
		if err := r.Parse([]byte(body)); err != nil {
			t.Fatalf("Parse(%s): %v", body, err)
		}
		got := r.AppendUpstream([]byte("prefix|"), []byte(body), model)
		if string(got) != "prefix|"+want {
			t.Fatalf("AppendUpstream(%s, %q):\ngot  %s\nwant prefix|%s", body, model, got, want)
		}
		checkUpstream(t, []byte(body), got[len("prefix|"):], model)
		if r.Unchanged(model) != (want == body) {
			t.Fatalf("Unchanged(%q) = %v for %s", model, r.Unchanged(model), body)
		}
	}
	// The model alone, wherever it is.
	f(`{"model":"a",`+msgs+`}`, "b", `{"model":"b",`+msgs+`}`)
	f(`{`+msgs+`,"model":"a","temperature":0.2}`, "gpt-4o-mini", `{`+msgs+`,"model":"gpt-4o-mini","temperature":0.2}`)
	f(`{`+msgs+`,"model":"a"}`, "b", `{`+msgs+`,"model":"b"}`)
	f(`{"model":"same",`+msgs+`}`, "same", `{"model":"same",`+msgs+`}`)
	f(`{"model":"gpt\u002d4o",`+msgs+`}`, "gpt-4o", `{"model":"gpt\u002d4o",`+msgs+`}`) // equal once unescaped
	f(`{"model":"gpt\u002d4o",`+msgs+`}`, "o1", `{"model":"o1",`+msgs+`}`)
	f(`{"model":"a",`+msgs+`}`, `we"ird\name`, `{"model":"we\"ird\\name",`+msgs+`}`)
	f(`{"model":"a",`+msgs+`}`, "modèle 🙂", `{"model":"modèle 🙂",`+msgs+`}`)

	// Whitespace stays as it was.
	f(" {\n\t\"model\" :\t\"a\" ,\r\n"+msgs+"\n} \n", "b", " {\n\t\"model\" :\t\"b\" ,\r\n"+msgs+"\n} \n")
	f("\n{"+msgs+",\n  \"model\": \"a\"\n}", "b", "\n{"+msgs+",\n  \"model\": \"b\"\n}")
	f(`{"metadata":{"model":"a"},"model":"a",`+msgs+`}`, "b", `{"metadata":{"model":"a"},"model":"b",`+msgs+`}`)

	// include_usage is switched on for streams whose client did not ask for it.
	f(`{"model":"a",`+msgs+`,"stream":true}`, "b",
		`{"stream_options":{"include_usage":true},"model":"b",`+msgs+`,"stream":true}`)
	f("  {\n\"model\":\"a\","+msgs+",\"stream\":true}", "a",
		"  {\"stream_options\":{\"include_usage\":true},\n\"model\":\"a\","+msgs+",\"stream\":true}")
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":null}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{}}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{ }}`, "a",
		`{"model":"a",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{"include_usage":false}}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{"include_usage": null }}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage": true }}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{"other":1}}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage":true,"other":1}}`)
	f(`{"stream_options":{"include_usage":false},"stream":true,`+msgs+`,"model":"a"}`, "b", // edits in the other order
		`{"stream_options":{"include_usage":true},"stream":true,`+msgs+`,"model":"b"}`)
	f(`{"model":"a",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`, "b",
		`{"model":"b",`+msgs+`,"stream":true,"stream_options":{"include_usage":true}}`)

	// Never on other requests.
	for _, so := range []string{``, `,"stream_options":null`, `,"stream_options":{}`, `,"stream_options":{"include_usage":false}`} {
		for _, stream := range []string{``, `,"stream":false`, `,"stream":null`} {
			f(`{"model":"a",`+msgs+stream+so+`}`, "b", `{"model":"b",`+msgs+stream+so+`}`)
		}
	}
}

// TestAppendUpstreamGolden runs the cases in testdata/upstream: each file holds
// the mapped model name, the request and the expected upstream body, in
// sections separated by a "-----" line.
func TestAppendUpstreamGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/upstream/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n-----\n")
			if len(parts) != 3 {
				t.Fatalf("%d sections, want 3", len(parts))
			}
			model, body, want := parts[0], []byte(parts[1]), parts[2]
			var r openai.ChatRequest
			if err := r.Parse(body); err != nil {
				t.Fatal(err)
			}
			got := r.AppendUpstream(nil, body, model)
			if string(got) != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			checkUpstream(t, body, got, model)
			if r.Unchanged(model) != (want == string(body)) {
				t.Fatalf("Unchanged(%q) = %v", model, r.Unchanged(model))
			}
		})
	}
}

// checkUpstream checks, with encoding/json as the reference, that out is valid
// JSON that decodes to the request in to with only the expected edits: model
// replaced, and stream_options.include_usage true on a stream.
func checkUpstream(t *testing.T, in, out []byte, model string) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("upstream body is not valid JSON: %s", out)
	}
	var want, got map[string]any
	decode(t, in, &want)
	decode(t, out, &got)
	want["model"] = model
	if want["stream"] == true {
		so, _ := want["stream_options"].(map[string]any)
		if so == nil {
			so = map[string]any{}
		}
		so["include_usage"] = true
		want["stream_options"] = so
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("upstream body decodes to\n%v\nwant\n%v", got, want)
	}
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

// ChatRequest.DecodeRequest skips the string check only for the body that
// Parse checked.
func TestChatRequestDecodeRequest(t *testing.T) {
	good := []byte(`{"model":"m","messages":[{"role":"user","content":"hi \u00e9"}]}`)
	bad := []byte("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"tab\there\"}]}")
	var cr openai.ChatRequest
	var r codec.Request
	if err := cr.Parse(good); err != nil {
		t.Fatal(err)
	}
	if !cr.CheckedBody(good) {
		t.Fatal("Parse did not note the body it checked")
	}
	if err := cr.DecodeRequest(good, &r); err != nil || r.Messages[0].Parts[0].Text != "hi é" {
		t.Fatalf("DecodeRequest = %v, %+v", err, r.Messages)
	}
	// Not the body Parse checked: checked in full.
	if err := cr.DecodeRequest(bad, &r); err == nil || err.Status != 400 {
		t.Fatalf("DecodeRequest of another body = %v, want a 400", err)
	}
	if cr.CheckedBody(append([]byte(nil), good...)) || cr.CheckedBody(good[:len(good)-1]) {
		t.Fatal("a copy or a part of the checked body counts as checked")
	}
	// A body Parse refused is not checked.
	if err := cr.Parse(bad); err == nil {
		t.Fatal("Parse took a control character in a string")
	}
	if err := cr.DecodeRequest(bad, &r); err == nil || err.Status != 400 {
		t.Fatalf("DecodeRequest after a failed Parse = %v, want a 400", err)
	}
	// The golden requests decode alike both ways.
	paths, _ := filepath.Glob("testdata/translate/request/*.in.json")
	if len(paths) == 0 {
		t.Fatal("no golden requests")
	}
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var want, got codec.Request
		wantErr := openai.DecodeRequest(body, &want)
		if err := cr.Parse(body); err != nil {
			continue
		}
		gotErr := cr.DecodeRequest(body, &got)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ChatRequest.DecodeRequest = %v %+v, DecodeRequest %v %+v", p, gotErr, got, wantErr, want)
		}
	}
}
