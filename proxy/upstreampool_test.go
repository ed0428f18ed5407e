package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestUpstreamConnectionReusedLastFirst: of the idle upstream connections,
// a request goes out on the one that came back last, whose memory and
// socket are the likeliest to be in the cache (channel.go). Two requests
// held at once by the mock open two connections; the first is answered,
// then the second; the next request must go out on the second's.
func TestUpstreamConnectionReusedLastFirst(t *testing.T) {
	reply := jsonReply(200, fixture(t, "chat_response.json"))
	var mu sync.Mutex
	var seen []string // the upstream connection of each request, by its client address
	held := []chan struct{}{make(chan struct{}), make(chan struct{})}
	arrived := make(chan struct{}, 2)
	up := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		mu.Lock()
		n := len(seen)
		seen = append(seen, r.RemoteAddr)
		mu.Unlock()
		if n < len(held) {
			arrived <- struct{}{}
			<-held[n]
		}
		reply(w, r, body)
	})
	tg := startGateway(t, channel("oa", up.baseURL(), `model_map: {fast: gpt-4o-mini}`))

	answered := []chan error{make(chan error, 1), make(chan error, 1)}
	for i := range answered {
		go func() { answered[i] <- postChat(tg.url) }()
		select { // the first holds its connection before the second is sent
		case <-arrived:
		case err := <-answered[i]:
			t.Fatalf("request %d answered before the mock let it go: %v", i, err)
		}
	}
	for i := range held {
		close(held[i])
		if err := <-answered[i]; err != nil {
			t.Fatal(err)
		}
	}
	if err := postChat(tg.url); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[0] == seen[1] {
		t.Fatalf("the two held requests shared the upstream connection %s", seen[0])
	}
	if seen[2] != seen[1] {
		t.Errorf("the next request went out on %s, not on %s, the connection that came back last (first: %s)",
			seen[2], seen[1], seen[0])
	}
}

// postChat sends chatBody with the client key and reads the answer,
// which must be a 200; it may run on any goroutine.
func postChat(url string) error {
	req, err := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(chatBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = &statusError{resp.StatusCode, string(b)}
	}
	return err
}

type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return http.StatusText(e.status) + ": " + e.body }
