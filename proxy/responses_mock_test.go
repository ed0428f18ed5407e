package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// respUpstream is an OpenAI upstream that serves the Responses API byte
// for byte as OpenAI does (testutil.ResponseObject, ResponseStream) and
// keeps the responses it made, per upstream key: a call on a response
// with another key, or one it did not make, is OpenAI's 404.
type respUpstream struct {
	*mockUpstream
	name     string
	n        atomic.Int64
	failNext atomic.Bool // the next creation answers 500
	mu       sync.Mutex
	made     map[string]string // response id → the key that made it
	calls    []string          // "METHOD path?query key" of each request
}

func newRespUpstream(t *testing.T, name string) *respUpstream {
	u := &respUpstream{name: name, made: map[string]string{}}
	u.mockUpstream = newMock(t, u.serve)
	return u
}

// respRequest is what the mock reads of a creation.
type respRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Previous string `json:"previous_response_id"`
}

func (u *respUpstream) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	key := r.Header.Get("Authorization")
	u.mu.Lock()
	u.calls = append(u.calls, r.Method+" "+r.URL.RequestURI()+" "+key)
	u.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/v1/responses")
	switch {
	case r.Method == "POST" && path == "":
		u.create(w, key, body)
	case r.Method == "POST" && path == "/input_tokens":
		jsonReply(200, []byte(`{"object":"response.input_tokens","input_tokens":42}`))(w, r, body)
	case r.Method == "POST" && path == "/compact":
		u.compact(w, key, body)
	default:
		id, call, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		u.call(w, r, key, id, call)
	}
}

func (u *respUpstream) create(w http.ResponseWriter, key string, body []byte) {
	var req respRequest
	if err := json.Unmarshal(body, &req); err != nil {
		notFoundReply(w, 400, "invalid JSON", "")
		return
	}
	if !u.accepts(w, key, req.Previous) {
		return
	}
	id := fmt.Sprintf("resp_%s%d", u.name, u.n.Add(1))
	u.mu.Lock()
	u.made[id] = key
	u.mu.Unlock()
	switch {
	case req.Model == "gpt-garbage":
		w.Header().Set("Content-Type", "text/event-stream")
		stream := testutil.ResponseStream(id, req.Model, "Hi", " there")
		cut := strings.Index(stream, "event: response.output_text.delta")
		fmt.Fprint(w, stream[:cut]+"event: response.output_text.delta\ndata: {\"type\":\"response.output_te\n\n")
	case req.Stream:
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, ev := range events([]byte(testutil.ResponseStream(id, req.Model, "Hi", " there"))) {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
	default:
		jsonReply(200, []byte(testutil.ResponseObject(id, req.Model, "completed", "Hi there")))(w, nil, nil)
	}
}

// accepts answers a creation's or a compaction's failure, when there is
// one: the 500 of failNext, or the 400 of a previous response the key did
// not make here.
func (u *respUpstream) accepts(w http.ResponseWriter, key, previous string) bool {
	if u.failNext.CompareAndSwap(true, false) {
		jsonReply(500, []byte(`{"error":{"message":"The server had an error.","type":"server_error","param":null,"code":null}}`))(w, nil, nil)
		return false
	}
	u.mu.Lock()
	prevKey, known := u.made[previous]
	u.mu.Unlock()
	if previous != "" && (!known || prevKey != key) {
		notFoundReply(w, 400, "Previous response with id '"+previous+"' not found.", "previous_response_not_found")
		return false
	}
	return true
}

// compact answers POST /responses/compact as OpenAI does: the user's
// message and the encrypted compaction item, the model unnamed.
func (u *respUpstream) compact(w http.ResponseWriter, key string, body []byte) {
	var req respRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Model == "" {
		notFoundReply(w, 400, "invalid JSON or no model", "")
		return
	}
	if !u.accepts(w, key, req.Previous) {
		return
	}
	n := u.n.Add(1)
	jsonReply(200, fmt.Appendf(nil, `{"id":"resp_%[1]s%[2]d","object":"response.compaction","created_at":1764158400,`+
		`"output":[{"id":"msg_%[1]s%[2]d","type":"message","status":"completed","content":[{"type":"input_text","text":"Hi"}],"role":"user"},`+
		`{"id":"cmp_%[1]s%[2]d","type":"compaction","encrypted_content":"gAAAAABpZ3Rlc3Q="}],`+
		`"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":0},"output_tokens":40,`+
		`"output_tokens_details":{"reasoning_tokens":0},"total_tokens":160}}`, u.name, n))(w, nil, nil)
}

// call answers GET, DELETE, cancel and input_items on response id.
func (u *respUpstream) call(w http.ResponseWriter, r *http.Request, key, id, call string) {
	u.mu.Lock()
	owner, ok := u.made[id]
	if ok && owner == key && r.Method == "DELETE" {
		delete(u.made, id)
	}
	u.mu.Unlock()
	if !ok || owner != key {
		notFoundReply(w, 404, "Response with id '"+id+"' not found.", "")
		return
	}
	const model = "gpt-4o-2024-08-06"
	switch {
	case r.Method == "DELETE":
		jsonReply(200, []byte(`{"id":"`+id+`","object":"response","deleted":true}`))(w, r, nil)
	case call == "cancel":
		jsonReply(200, []byte(testutil.ResponseObject(id, model, "cancelled", "")))(w, r, nil)
	case call == "input_items":
		jsonReply(200, []byte(`{"object":"list","data":[{"id":"msg_in_`+id+`","type":"message","role":"user",`+
			`"status":"completed","content":[{"type":"input_text","text":"Hi"}]}],"first_id":"msg_in_`+id+
			`","last_id":"msg_in_`+id+`","has_more":false}`))(w, r, nil)
	case r.URL.Query().Get("stream") == "true":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, testutil.ResponseStream(id, model, "Hi", " there"))
	default:
		jsonReply(200, []byte(testutil.ResponseObject(id, model, "completed", "Hi there")))(w, r, nil)
	}
}

// notFoundReply answers an OpenAI error with status, message and code.
func notFoundReply(w http.ResponseWriter, status int, msg, code string) {
	c := "null"
	if code != "" {
		c = `"` + code + `"`
	}
	jsonReply(status, []byte(`{"error":{"message":"`+msg+`","type":"invalid_request_error","param":null,"code":`+c+`}}`))(w, nil, nil)
}

// callsTo lists the requests the upstream got for response id (all of
// them when id is "").
func (u *respUpstream) callsTo(id string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, c := range u.calls {
		if id == "" || strings.Contains(c, id) {
			out = append(out, c)
		}
	}
	return out
}

// keyOf is the upstream key that made response id, "" for none.
func (u *respUpstream) keyOf(id string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.made[id]
}
