package proxy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/store"
)

const (
	keptKey  = "sk-kept-0123456789abcdef"
	otherKey = "sk-other-0123456789abcdef"
)

// startKeptGateway serves a demo channel (translated Responses) with a
// SQLite store, and returns the gateway and its URL.
func startKeptGateway(t *testing.T) (*Gateway, store.Store, string) {
	t.Helper()
	cfg, err := config.Parse([]byte(`
channels: [{name: demo, type: demo, models: [demo], pace: 1ms}]
keys: [{name: kept, key: `+keptKey+`}, {name: other, key: `+otherKey+`}]
`), "test.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "rosetta.db"),
		store.Options{SecretKey: bytes.Repeat([]byte{7}, store.SecretKeySize)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Store: st, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Shutdown(ctx)
		st.Close()
	})
	return g, st, "http://" + ln.Addr().String() + "/v1"
}

// TestKeptResponses: a response the translated path keeps (keepResponse)
// is served by the gateway itself: GET in the Response shape, its input
// items paged as the API pages them, DELETE; cancel and a streamed GET are
// 400s, another key gets 404, it is in the store in the background, and a
// request that continues it is translated after its conversation.
func TestKeptResponses(t *testing.T) {
	g, st, url := startKeptGateway(t)
	x := &exchange{key: &Key{Hash: HashKey([]byte(keptKey))}, channel: "demo", model: "demo", start: time.Now()}
	const id = "resp_req_kept.1"
	g.keepResponse(x, id, "completed", "",
		[]byte(`[{"id":"msg_a","type":"message","role":"user","content":[{"type":"input_text","text":"one"}]},`+
			`{"id":"msg_b","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"two","annotations":[]}]},`+
			`{"id":"msg_c","type":"message","role":"user","content":[{"type":"input_text","text":"three"}]}]`),
		[]byte(`[{"id":"msg_d","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"four","annotations":[]}]}]`),
		[]byte(`{"input_tokens":7,"input_tokens_details":{"cached_tokens":0},"output_tokens":1,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":8}`))
	client := openai.NewClient(option.WithBaseURL(url), option.WithAPIKey(keptKey), option.WithMaxRetries(0))
	ctx := context.Background()

	r, err := client.Responses.Get(ctx, id, responses.ResponseGetParams{})
	if err != nil || r.ID != id || r.Model != "demo" || r.Status != "completed" || r.OutputText() != "four" ||
		r.Usage.InputTokens != 7 || r.Usage.TotalTokens != 8 {
		t.Fatalf("GET: %v %+v", err, r)
	}
	for _, c := range []struct {
		p     responses.InputItemListParams
		ids   string
		first string
		more  bool
	}{
		{responses.InputItemListParams{}, "msg_c msg_b msg_a", "msg_c", false},
		{responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, Limit: openai.Int(2)}, "msg_a msg_b", "msg_a", true},
		{responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, After: openai.String("msg_a")}, "msg_b msg_c", "msg_b", false},
	} {
		page, err := client.Responses.InputItems.List(ctx, id, c.p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range page.Data {
			ids = append(ids, it.ID)
		}
		first := page.JSON.ExtraFields["first_id"].Raw()
		if got := joinIDs(ids); got != c.ids || first != `"`+c.first+`"` || page.HasMore != c.more {
			t.Errorf("%+v: %q first %s more %v", c.p, got, first, page.HasMore)
		}
	}
	_, err = client.Responses.Cancel(ctx, id)
	wantStatus(t, "cancel", err, 400)
	s := client.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{})
	for s.Next() {
	}
	wantStatus(t, "streamed GET", s.Err(), 400)
	other := openai.NewClient(option.WithBaseURL(url), option.WithAPIKey(otherKey), option.WithMaxRetries(0))
	_, err = other.Responses.Get(ctx, id, responses.ResponseGetParams{})
	wantStatus(t, "another key's GET", err, 404)

	// A previous_response_id of a kept response is translated with its
	// conversation first, and the new response keeps the whole of it.
	next, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: shared.ResponsesModel("demo"),
		PreviousResponseID: openai.String(id), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("five")}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.Responses.InputItems.List(ctx, next.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	var raw strings.Builder
	for _, it := range page.Data {
		raw.WriteString(it.RawJSON())
	}
	at := 0
	for _, text := range []string{`"one"`, `"two"`, `"three"`, `"four"`, `"five"`} {
		i := strings.Index(raw.String()[at:], text)
		if i < 0 {
			t.Fatalf("the continued response's input lacks %s after byte %d: %s", text, at, raw.String())
		}
		at += i
	}

	// An incomplete one is kept with its reason, which a GET gives.
	const cut = "resp_req_kept.2"
	g.keepResponse(x, cut, "incomplete", "max_output_tokens", []byte(`[]`), []byte(`[]`), nil)
	if r, err := client.Responses.Get(ctx, cut, responses.ResponseGetParams{}); err != nil ||
		r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Fatalf("GET of an incomplete response: %v %s", err, r.RawJSON())
	}

	deadline := time.Now().Add(5 * time.Second)
	for _, err := st.Response(ctx, cut); err != nil; _, err = st.Response(ctx, cut) {
		if time.Now().After(deadline) {
			t.Fatalf("not in the store: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r, err := st.Response(ctx, id); err != nil || r.Incomplete != "" {
		t.Fatalf("the complete response in the store: %v %+v", err, r)
	}
	if r, _ := st.Response(ctx, cut); r.Status != "incomplete" || r.Incomplete != "max_output_tokens" {
		t.Fatalf("the incomplete response in the store: %+v", r)
	}
	if err := client.Responses.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	_, err = client.Responses.Get(ctx, id, responses.ResponseGetParams{})
	wantStatus(t, "GET after DELETE", err, 404)
	if _, err := st.Response(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("still in the store: %v", err)
	}
}

func joinIDs(ids []string) string {
	var b bytes.Buffer
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id)
	}
	return b.String()
}

func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != status {
		t.Fatalf("%s: %v, want status %d", what, err, status)
	}
}
