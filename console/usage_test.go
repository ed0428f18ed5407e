package console

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// usageFixture makes alice (one key, three requests, one of them to
// embeddings, the rest chat), bob (one key, one speech request of 42
// characters), carol (no key) and a request by a key of the config file.
func usageFixture(t *testing.T) (e *env, alice, bob, carol *browser, aliceKey int64) {
	t.Helper()
	e = newEnv(t)
	alice, bob, carol = e.user("alice"), e.user("bob"), e.user("carol")
	aliceKey, _ = alice.createKey("alice-key")
	bobKey, _ := bob.createKey("bob-key")
	at := time.Now().Add(-10 * time.Minute)
	row := func(key int64, name, model string, status int, latency time.Duration) store.Usage {
		return store.Usage{Time: at, KeyID: key, KeyName: name, Model: model, Channel: "demo", Status: status,
			Input: 10, Output: 20, Latency: latency, RequestID: "req-" + name + model, ClientStyle: "openai", Endpoint: "chat"}
	}
	embeddings := func(u store.Usage) store.Usage { u.Endpoint, u.Attempts = "embeddings", failedOver; return u }
	speech := func(u store.Usage) store.Usage {
		u.Endpoint, u.Units, u.Unit = "audio.speech", 42, store.UnitCharacters
		return u
	}
	err := e.st.AddUsage(context.Background(), []store.Usage{
		row(aliceKey, "alice-key", "demo", 200, 100*time.Millisecond),
		row(aliceKey, "alice-key", "demo", 200, 300*time.Millisecond),
		embeddings(row(aliceKey, "alice-key", "other", 502, time.Second)),
		speech(row(bobKey, "bob-key", "demo", 200, 50*time.Millisecond)),
		row(0, "app", "demo", 200, 70*time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, alice, bob, carol, aliceKey
}

func rowsOf(t *testing.T, b *browser, query string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range b.must("GET", "/console/api/usage?"+query, nil)["rows"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func TestUsageRowsAreScopedToOwnKeys(t *testing.T) {
	e, alice, bob, carol, aliceKey := usageFixture(t)
	f := func(who string, b *browser, query string, want int) {
		t.Helper()
		rows := rowsOf(t, b, query)
		if len(rows) != want {
			t.Errorf("%s ?%s: %d rows, want %d: %v", who, query, len(rows), want, rows)
		}
		for _, r := range rows {
			if who == "alice" && r["key"] != "alice-key" || who == "bob" && r["key"] != "bob-key" {
				t.Errorf("%s sees %v", who, r)
			}
		}
	}
	f("alice", alice, "", 3)
	f("alice", alice, "model=demo", 2)
	f("alice", alice, "status=502", 1)
	f("alice", alice, "endpoint=embeddings", 1)
	f("alice", alice, "endpoint=chat&model=demo", 2)
	f("bob", bob, "endpoint=embeddings", 0)
	if r := rowsOf(t, bob, "endpoint=audio.speech"); len(r) != 1 || r[0]["units"] != 42.0 || r[0]["unit"] != "characters" {
		t.Errorf("bob's speech: %v", r)
	}
	f("alice", alice, "key_id="+strconv.FormatInt(aliceKey, 10)+"&limit=1", 1)
	f("bob", bob, "", 1)
	f("carol", carol, "", 0) // no key must not mean every key
	f("admin", e.admin(), "", 5)
	f("admin", e.admin(), "key_id="+strconv.FormatInt(aliceKey, 10), 3)

	// Paging goes to older rows.
	first := rowsOf(t, alice, "limit=2")
	rest := rowsOf(t, alice, "before_id="+strconv.Itoa(int(first[1]["id"].(float64))))
	if len(first) != 2 || len(rest) != 1 || rest[0]["id"].(float64) >= first[1]["id"].(float64) {
		t.Errorf("paging: %v then %v", first, rest)
	}
	// A request that had a failed attempt shows its attempts, as the
	// store keeps them with its row.
	failed := rowsOf(t, alice, "status=502")[0]
	want := `[map[channel:broken duration_ms:3 error:connection refused to 127.0.0.1:1 status:502] map[channel:demo duration_ms:1.5 status:200]]`
	if got := fmt.Sprint(failed["attempts"]); got != want {
		t.Errorf("attempts of %v: %s, want %s", failed["request_id"], got, want)
	}
	if plain := rowsOf(t, alice, "model=demo")[0]; plain["attempts"] != nil {
		t.Errorf("a request with no attempt kept has some: %v", plain)
	}
	r := first[0]
	if r["latency_ms"].(float64) <= 0 || r["input_tokens"] != 10.0 || r["style"] != "openai" || r["channel"] != "demo" ||
		r["endpoint"] != "embeddings" {
		t.Errorf("row view: %v", r)
	}
}

func TestUsageBuckets(t *testing.T) {
	e, alice, _, carol, aliceKey := usageFixture(t)
	v := alice.must("GET", "/console/api/usage/buckets", nil)
	if v["width_ms"] != float64(time.Hour.Milliseconds()) {
		t.Errorf("width for 24h: %v ms, want an hour", v["width_ms"])
	}
	buckets := v["buckets"].([]any)
	var requests float64
	for _, b := range buckets {
		b := b.(map[string]any)
		if b["key_id"] != float64(aliceKey) {
			t.Errorf("alice sees a bucket of key %v", b["key_id"])
		}
		requests += b["requests"].(float64)
		if b["model"] == "demo" && (b["p50_ms"].(float64) < 100 || b["p99_ms"].(float64) < 300*0.9) {
			t.Errorf("latency of demo: %v", b)
		}
		if b["model"] == "other" && b["errors"] != 1.0 {
			t.Errorf("errors of other: %v", b)
		}
	}
	if requests != 3 {
		t.Errorf("alice's buckets hold %v requests, want 3: %v", requests, buckets)
	}
	if keys := v["keys"].(map[string]any); len(keys) != 1 || keys[strconv.FormatInt(aliceKey, 10)] != "alice-key" {
		t.Errorf("key names: %v", keys)
	}
	if n := len(carol.must("GET", "/console/api/usage/buckets", nil)["buckets"].([]any)); n != 0 {
		t.Errorf("carol, with no key, sees %d buckets", n)
	}
	all := e.admin().must("GET", "/console/api/usage/buckets?width=5m", nil)
	if all["width_ms"] != float64(5*time.Minute.Milliseconds()) {
		t.Errorf("asked width: %v", all["width_ms"])
	}
	requests = 0
	for _, b := range all["buckets"].([]any) {
		requests += b.(map[string]any)["requests"].(float64)
	}
	if requests != 5 {
		t.Errorf("admin's buckets hold %v requests, want 5", requests)
	}
}

// TestUsageBucketsByEndpoint: group=endpoint splits the buckets by
// endpoint, endpoint= keeps one; without group they carry none.
func TestUsageBucketsByEndpoint(t *testing.T) {
	e, alice, _, _, _ := usageFixture(t)
	sums := func(b *browser, query string) map[string]float64 {
		t.Helper()
		out := map[string]float64{}
		for _, x := range b.must("GET", "/console/api/usage/buckets?"+query, nil)["buckets"].([]any) {
			x := x.(map[string]any)
			e, ok := x["endpoint"].(string)
			if ok != strings.Contains(query, "group=endpoint") {
				t.Errorf("?%s: bucket %v", query, x)
			}
			out[e] += x["requests"].(float64)
		}
		return out
	}
	wantEqual := func(what string, got, want map[string]float64) {
		t.Helper()
		if !maps.Equal(got, want) {
			t.Errorf("%s: requests by endpoint %v, want %v", what, got, want)
		}
	}
	wantEqual("alice", sums(alice, "group=endpoint"), map[string]float64{"chat": 2, "embeddings": 1})
	wantEqual("admin", sums(e.admin(), "group=endpoint"), map[string]float64{"chat": 3, "embeddings": 1, "audio.speech": 1})
	for _, x := range e.admin().must("GET", "/console/api/usage/buckets?group=endpoint&endpoint=audio.speech", nil)["buckets"].([]any) {
		if x := x.(map[string]any); x["units"] != 42.0 || x["unit"] != "characters" {
			t.Errorf("speech bucket %v", x)
		}
	}
	wantEqual("admin, embeddings", sums(e.admin(), "group=endpoint&endpoint=embeddings"), map[string]float64{"embeddings": 1})
	wantEqual("admin, not grouped", sums(e.admin(), "endpoint=chat"), map[string]float64{"": 3})
	if r := alice.do("GET", "/console/api/usage/buckets?group=model", nil); r.status != 400 || r.errorField() != "group" {
		t.Errorf("group=model: %d %s", r.status, r.body)
	}
}

func TestPickWidth(t *testing.T) {
	f := func(span, want time.Duration) {
		t.Helper()
		if got := pickWidth(span); got != want {
			t.Errorf("pickWidth(%s) = %s, want %s", span, got, want)
		}
	}
	f(time.Hour, time.Minute)
	f(6*time.Hour, 15*time.Minute)
	f(24*time.Hour, time.Hour)
	f(7*24*time.Hour, 3*time.Hour)
	f(30*24*time.Hour, 24*time.Hour)
	f(365*24*time.Hour, 24*time.Hour)
}

// TestUsageEndpointsList: the page's endpoint filter comes from the
// gateway, for any signed-in user, and from nowhere else.
func TestUsageEndpointsList(t *testing.T) {
	e := newEnv(t)
	got := e.user("carol").must("GET", "/console/api/usage/endpoints", nil)["endpoints"]
	if fmt.Sprint(got) != fmt.Sprint(usageEndpoints) {
		t.Errorf("endpoints %v, want the gateway's %v", got, usageEndpoints)
	}
	if r := e.browser("127.0.0.1").do("GET", "/console/api/usage/endpoints", nil); r.status != 401 {
		t.Errorf("signed out: %d", r.status)
	}
}

// TestUsageLatency: the median and p95 of each endpoint's requests over
// the range, of the caller's own keys; a range with more requests than
// may be ranked says so and ranks none.
func TestUsageLatency(t *testing.T) {
	e, alice, _, carol, _ := usageFixture(t)
	got := alice.must("GET", "/console/api/usage/latency", nil)
	want := `[map[endpoint:chat p50_ms:100 p95_ms:300 requests:2] map[endpoint:embeddings p50_ms:1000 p95_ms:1000 requests:1]]`
	if fmt.Sprint(got["endpoints"]) != want || got["ranked"] != true {
		t.Errorf("alice's latency: %v, want %s", got, want)
	}
	if got := e.admin().must("GET", "/console/api/usage/latency?endpoint=audio.speech", nil); fmt.Sprint(got["endpoints"]) != `[map[endpoint:audio.speech p50_ms:50 p95_ms:50 requests:1]]` {
		t.Errorf("bob's speech, as an admin sees it: %v", got)
	}
	if got := carol.must("GET", "/console/api/usage/latency", nil); fmt.Sprint(got["endpoints"]) != "[]" {
		t.Errorf("carol, with no key: %v", got)
	}
	defer func(n int) { maxLatencyRows = n }(maxLatencyRows)
	maxLatencyRows = 2
	if got := alice.must("GET", "/console/api/usage/latency", nil); got["ranked"] != false || fmt.Sprint(got["endpoints"]) != "[]" || got["max_rows"] != 2.0 {
		t.Errorf("3 requests with a cap of 2: %v", got)
	}
	if r := alice.do("GET", "/console/api/usage/latency?from=yesterday", nil); r.status != 400 || r.errorField() != "from" {
		t.Errorf("a bad from: %d %s", r.status, r.body)
	}
}
