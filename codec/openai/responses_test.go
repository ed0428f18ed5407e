package openai_test

import (
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

func TestResponsesRequestParse(t *testing.T) {
	f := func(body, wantErr string, want openai.ResponsesRequest) {
		t.Helper()
		var r openai.ResponsesRequest
		e := r.Parse([]byte(body))
		switch {
		case wantErr != "":
			if e == nil || !strings.Contains(e.Message, wantErr) || e.Status != 400 {
				t.Fatalf("%s: got %v, want a 400 with %q", body, e, wantErr)
			}
		case e != nil:
			t.Fatalf("%s: %v", body, e)
		case string(r.Model) != string(want.Model) || r.Stream != want.Stream || r.Store != want.Store ||
			r.Background != want.Background || string(r.Previous) != string(want.Previous):
			t.Fatalf("%s: got %+v, want %+v", body, r, want)
		}
	}
	f(`{"model":"m","input":"hi"}`, "", openai.ResponsesRequest{Model: []byte("m"), Store: true})
	f(`{"model":"m","input":[],"stream":true,"store":false,"background":true,"previous_response_id":"resp_1-a"}`, "",
		openai.ResponsesRequest{Model: []byte("m"), Stream: true, Background: true, Previous: []byte("resp_1-a")})
	f(`{"model":"m\u0031","store":null,"previous_response_id":null}`, "", openai.ResponsesRequest{Model: []byte("m1"), Store: true})
	f(`{"input":"hi"}`, "you must provide a model parameter", openai.ResponsesRequest{})
	f(`{"model":"m","input":"hi"`, "could not parse the JSON body", openai.ResponsesRequest{})
	f(`{"model":"m","model":"n"}`, "model", openai.ResponsesRequest{})
	f(`{"model":"m","input":3}`, "'input'", openai.ResponsesRequest{})
	f(`{"model":"m","stream":"yes"}`, "'stream'", openai.ResponsesRequest{})
	f(`{"model":"m","store":1}`, "'store'", openai.ResponsesRequest{})
	f(`{"model":"m","previous_response_id":"../x"}`, "previous_response_id", openai.ResponsesRequest{})
	f(`{"model":"m","previous_response_id":".."}`, "previous_response_id", openai.ResponsesRequest{})
	f(`{"model":"m","previous_response_id":"resp_req:1.a"}`, "", openai.ResponsesRequest{Model: []byte("m"), Store: true,
		Previous: []byte("resp_req:1.a")})
	f(`{"model":"m","previous_response_id":7}`, "previous_response_id", openai.ResponsesRequest{})
}

func TestResponsesAppendUpstream(t *testing.T) {
	body := []byte(`{"input":"hi", "model" : "fast","stream":true}`)
	var r openai.ResponsesRequest
	if e := r.Parse(body); e != nil {
		t.Fatal(e)
	}
	if got := string(r.AppendUpstream(nil, body, "gpt-4o")); got != `{"input":"hi", "model" : "gpt-4o","stream":true}` {
		t.Fatalf("spliced: %s", got)
	}
	if got := string(r.AppendUpstream(nil, body, "fast")); got != string(body) {
		t.Fatalf("same model: %s", got)
	}
	if r.Unchanged("gpt-4o") || !r.Unchanged("fast") {
		t.Fatalf("Unchanged: %v for another model, %v for the same", r.Unchanged("gpt-4o"), r.Unchanged("fast"))
	}
}

func TestResponsesReadRelayed(t *testing.T) {
	body := []byte(testutil.ResponseObject("resp_1", "gpt-4o-2024-08-06", "completed", "Hi"))
	r, ok := openai.Responses.ReadRelayed(body)
	if !ok || string(body[r.ModelStart:r.ModelEnd]) != "gpt-4o-2024-08-06" {
		t.Fatalf("model not found: %+v", r)
	}
	if want := (codec.Usage{Input: 12, CachedInput: 2, Output: 3, Reasoning: 1}); !r.HasUsage || r.Usage != want {
		t.Fatalf("usage %+v, want %+v", r.Usage, want)
	}
	id, status := openai.ResponseState(body)
	if string(id) != "resp_1" || string(status) != "completed" {
		t.Fatalf("state %s %s", id, status)
	}
	if _, ok := openai.Responses.ReadRelayed([]byte(`{"id":"resp_1",`)); ok {
		t.Fatal("a truncated answer was read")
	}
	list := []byte(`{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`)
	if r, ok := openai.Responses.ReadRelayed(list); !ok || r.ModelStart >= 0 || r.HasUsage {
		t.Fatalf("a list: %+v %v", r, ok)
	}
}

// relayResponses relays stream through a Transcoder as the gateway does,
// the upstream's bytes read chunk bytes at a time.
func relayResponses(t *testing.T, stream string, chunk int, model string) (string, *codec.Transcoder) {
	t.Helper()
	tc := new(codec.Transcoder)
	tc.ResetPass(openai.Responses, codec.Relay{Model: model}, nil)
	var out, in []byte
	for i := 0; i < len(stream) && tc.Err() == nil; i += chunk {
		in = append(in, stream[i:min(i+chunk, len(stream))]...)
		var n int
		out, n = tc.Transcode(out, in)
		in = in[:copy(in, in[n:])]
	}
	return string(tc.End(out, in)), tc
}

func TestResponsesRelayEvent(t *testing.T) {
	stream := testutil.ResponseStream("resp_7", "gpt-4o-2024-08-06", "Hel", "lo")
	want := strings.ReplaceAll(stream, `"model":"gpt-4o-2024-08-06"`, `"model":"fast"`)
	for _, chunk := range []int{1, 7, 64, len(stream)} {
		out, tc := relayResponses(t, stream, chunk, "fast")
		if tc.Err() != nil || out != want {
			t.Fatalf("chunks of %d: err %v, got\n%s", chunk, tc.Err(), out)
		}
		r := tc.Relayed()
		if string(r.ID) != "resp_7" || string(r.Status) != "completed" {
			t.Fatalf("chunks of %d: id %q status %q", chunk, r.ID, r.Status)
		}
		if want := (codec.Usage{Input: 12, CachedInput: 2, Output: 3, Reasoning: 1}); r.Usage != want {
			t.Fatalf("chunks of %d: usage %+v", chunk, r.Usage)
		}
	}
	if out, _ := relayResponses(t, stream, 64, ""); out != stream {
		t.Fatal("the stream changed with no model to put in")
	}
}

func TestResponsesRelayGarbage(t *testing.T) {
	stream := testutil.ResponseStream("resp_7", "m", "Hi")
	i := strings.Index(stream, "event: response.output_text.delta")
	garbage := stream[:i] + "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"del\n\n"
	out, tc := relayResponses(t, garbage, 64, "")
	if tc.Err() != codec.ErrNotJSON || strings.Contains(out, `"del`) {
		t.Fatalf("err %v, relayed:\n%s", tc.Err(), out)
	}
	end := string(tc.Fail(nil, &codec.Error{Status: 502, Code: "upstream_error", Message: "broken"}, openai.Responses))
	if end != "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"broken\",\"param\":null}\n\n" {
		t.Fatalf("error event: %q", end)
	}
}

func TestAppendItemPage(t *testing.T) {
	items := []byte(`[{"id":"a","type":"message"},{"id":"b","type":"message"},{"id":"c","type":"message"}]`)
	f := func(limit, order, after, before, want string) {
		t.Helper()
		p, e := openai.ParseItemPage([]byte(limit), []byte(order), []byte(after), []byte(before))
		if e != nil {
			if want != "error" {
				t.Fatalf("%s %s: %v", limit, order, e)
			}
			return
		}
		got, err := openai.AppendItemPage(nil, items, p)
		if err != nil || string(got) != want {
			t.Fatalf("limit %q order %q after %q before %q:\n got %s\nwant %s", limit, order, after, before, got, want)
		}
	}
	const a, b, c = `{"id":"a","type":"message"}`, `{"id":"b","type":"message"}`, `{"id":"c","type":"message"}`
	f("", "", "", "", `{"object":"list","data":[`+c+`,`+b+`,`+a+`],"first_id":"c","last_id":"a","has_more":false}`)
	f("2", "asc", "", "", `{"object":"list","data":[`+a+`,`+b+`],"first_id":"a","last_id":"b","has_more":true}`)
	f("", "asc", "a", "c", `{"object":"list","data":[`+b+`],"first_id":"b","last_id":"b","has_more":false}`)
	f("1", "desc", "", "a", `{"object":"list","data":[`+c+`],"first_id":"c","last_id":"c","has_more":true}`)
	f("", "asc", "c", "", `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`)
	f("0", "", "", "", "error")
	f("", "up", "", "", "error")
}
