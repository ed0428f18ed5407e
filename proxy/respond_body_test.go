package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// takeBody hands the upstream's body to the client's response without a
// copy, and the two keep no bytes in common: the upstream's response,
// written again once back in its pool, leaves the client's body as it was.
func TestTakeBody(t *testing.T) {
	const answer = `{"id":"chatcmpl-1","object":"chat.completion"}`
	from, to := fasthttp.AcquireResponse(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(to)
	to.SetBodyString("the client's earlier body, dropped")
	from.SetBodyString(answer)
	sent := from.Body()
	b := takeBody(to, from)
	if string(b) != answer || string(to.Body()) != answer || &to.Body()[0] != &sent[0] {
		t.Fatalf("the client's body is %q (%q returned), want the upstream's bytes themselves", to.Body(), b)
	}
	if len(from.Body()) != 0 {
		t.Fatalf("the upstream's response kept %q", from.Body())
	}
	from.AppendBodyString("the next answer read into the upstream's buffer")
	fasthttp.ReleaseResponse(from)
	again := fasthttp.AcquireResponse()
	again.SetBodyString("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	defer fasthttp.ReleaseResponse(again)
	if string(to.Body()) != answer || string(b) != answer {
		t.Fatalf("the client's body became %q", to.Body())
	}
}

// An answer that came as a body stream (a stream asked for, JSON sent
// back) is read whole by Body before the trade, as respond reads it.
func TestTakeBodyOfStream(t *testing.T) {
	const answer = `{"error":{"message":"no","type":"invalid_request_error"}}`
	from, to := fasthttp.AcquireResponse(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(to)
	from.SetBodyStream(strings.NewReader(answer), -1)
	if b := takeBody(to, from); string(b) != answer || string(to.Body()) != answer {
		t.Fatalf("the client's body is %q (%q returned), want %q", to.Body(), b, answer)
	}
	if from.IsBodyStream() || len(from.Body()) != 0 {
		t.Fatalf("the upstream's response kept its stream or %q", from.Body())
	}
	fasthttp.ReleaseResponse(from)
}
