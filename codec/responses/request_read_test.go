package responses_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec"
	rc "github.com/rosetta-gateway/rosetta/codec/responses"
)

// TestReadAsSonic: the one-pass reader takes what sonic's struct decoding
// took (null leaves a member, repeated members, escaped keys, invalid
// UTF-8, sonic's nesting limit), and a member of the wrong type is a 400
// naming it.
func TestReadAsSonic(t *testing.T) {
	ok := func(body string, check func(r *codec.Request) bool) {
		t.Helper()
		var r codec.Request
		if err := rc.DecodeRequest([]byte(body), &r); err != nil {
			t.Fatalf("%.200s: %v", body, err)
		}
		if !check(&r) {
			t.Errorf("%.200s: %+v", body, r)
		}
	}
	ok(`{"mod\u0065l":"m","input":"hi"}`, func(r *codec.Request) bool { return r.Model == "m" })
	ok(`{"model":"m","model":null,"input":"hi","user":"a","user":"b"}`, func(r *codec.Request) bool { return r.Model == "m" && r.User == "b" })
	ok(`{"model":"m","input":"hi","reasoning":{"effort":"low"},"reasoning":{"summary":"auto"},"reasoning":null}`,
		func(r *codec.Request) bool { return r.Thinking.Effort == "low" && r.Thinking.Show })
	ok(`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}],"input":"hi"}`,
		func(r *codec.Request) bool { return len(r.Messages) == 1 && r.Messages[0].Parts[0].Text == "hi" })
	ok("{\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"c\xff\",\"name\":\"f\"}]}",
		func(r *codec.Request) bool { return r.Messages[0].Parts[0].ID == "c\ufffd" })
	ok("{\"model\":\"m\",\"input\":\"h\xffi\"}", func(r *codec.Request) bool { return r.Messages[0].Parts[0].Text == "h\ufffdi" })
	ok(`{"model":"m","input":"hi","include":[null,"reasoning.encrypted_content"],"metadata":{"a":`+nest(4095)+`}}`,
		func(r *codec.Request) bool { return r.Session.Metadata != "" })

	refused := func(body, param, inMessage string) {
		t.Helper()
		var r codec.Request
		err := rc.DecodeRequest([]byte(body), &r)
		if err == nil || err.Status != 400 || err.Param != param || !strings.Contains(err.Message, inMessage) {
			t.Errorf("%.200s: %+v, want a 400 naming %q", body, err, param)
		}
	}
	refused(`null`, "model", "model")
	refused(`{"model":5,"input":"hi"}`, "model", "expected a string")
	refused(`{"model":"m","input":"hi","reasoning":"high"}`, "reasoning", "expected an object")
	refused(`{"model":"m","input":"hi","reasoning":{"effort":1}}`, "reasoning.effort", "expected a string")
	refused(`{"model":"m","input":"hi","text":{"format":{"name":[]}}}`, "text.format.name", "expected a string")
	refused(`{"model":"m","input":"hi","tools":{}}`, "tools", "expected an array")
	refused(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"},"g"]}`, "tools[1]", "expected an object")
	refused(`{"model":"m","input":"hi","include":["a",1]}`, "include[1]", "expected a string")
	refused(`{"model":"m","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":7}]}`, "input[1].call_id", "expected a string")
	refused(`{"model":"m","input":[{"type":"reasoning","summary":[{"text":false}]}]}`, "input[0].summary[0].text", "expected a string")
	// Wrong types in input's items come out when the input is read, after
	// what is refused before it.
	refused(`{"model":"m","conversation":"c","input":[{"type":5}]}`, "conversation", "previous_response_id")
	// JSON that does not parse is the body's 400, whatever else is wrong.
	for _, body := range []string{
		`{"model":5,"input":"hi"} x`,
		`{"model":"m","input":"hi","extra":["` + "\x01" + `"]}`,
		`{"model":"m","input":[{"role":"user","content":"a\q"}]}`,
		`{"model":"m","input":"hi","metadata":{"a":` + nest(4096) + `}}`, // past sonic's limit
		`{"model":"m","input":"hi"`,
		``,
	} {
		refused(body, "", "parse")
	}
}

// nest is n nested arrays.
func nest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestStoredInputIsUTF8: invalid UTF-8 in the input, kept as sent while
// the request is read, becomes U+FFFD in the input items stored, a string
// input's or an array's.
func TestStoredInputIsUTF8(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"{\"model\":\"m\",\"input\":\"h\xffi\"}", "\"text\":\"h\ufffdi\""},
		{"{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"h\xffi\",\"x\":[\"\xfe\"]}]}",
			"\"content\":\"h\ufffdi\",\"x\":[\"\ufffd\"]"},
	} {
		var r codec.Request
		if err := rc.DecodeRequest([]byte(c.body), &r); err != nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		if got := string(rc.AppendInputItems(nil, &r)); !utf8.ValidString(got) || !strings.Contains(got, c.want) {
			t.Errorf("%q: stored as %q, want valid UTF-8 with %q", c.body, got, c.want)
		}
	}
}
