package console

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// usageFixture makes alice (one key, three requests), bob (one key, one
// request), carol (no key) and a request by a key of the config file.
func usageFixture(t *testing.T) (e *env, alice, bob, carol *browser, aliceKey int64) {
	t.Helper()
	e = newEnv(t)
	alice, bob, carol = e.user("alice"), e.user("bob"), e.user("carol")
	aliceKey, _ = alice.createKey("alice-key")
	bobKey, _ := bob.createKey("bob-key")
	at := time.Now().Add(-10 * time.Minute)
	row := func(key int64, name, model string, status int, latency time.Duration) store.Usage {
		return store.Usage{Time: at, KeyID: key, KeyName: name, Model: model, Channel: "demo", Status: status,
			Input: 10, Output: 20, Latency: latency, RequestID: "req-" + name + model, ClientStyle: "openai"}
	}
	err := e.st.AddUsage(context.Background(), []store.Usage{
		row(aliceKey, "alice-key", "demo", 200, 100*time.Millisecond),
		row(aliceKey, "alice-key", "demo", 200, 300*time.Millisecond),
		row(aliceKey, "alice-key", "other", 502, time.Second),
		row(bobKey, "bob-key", "demo", 200, 50*time.Millisecond),
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
	// A request the gateway still knows the attempts of shows them.
	failed := rowsOf(t, alice, "status=502")[0]
	want := `[map[channel:broken error:connection refused to 127.0.0.1:1 status:502] map[channel:demo status:200]]`
	if got := fmt.Sprint(failed["attempts"]); got != want {
		t.Errorf("attempts of %v: %s, want %s", failed["request_id"], got, want)
	}
	if plain := rowsOf(t, alice, "model=demo")[0]; plain["attempts"] != nil {
		t.Errorf("a request the gateway knows no attempts of has some: %v", plain)
	}
	r := first[0]
	if r["latency_ms"].(float64) <= 0 || r["input_tokens"] != 10.0 || r["style"] != "openai" || r["channel"] != "demo" {
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
