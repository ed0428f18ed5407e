package proxy_test

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/proxy"
)

// /metrics of a gateway in a fleet of two: both members live, the
// gossip received counted in messages and bytes, the age of the other
// node's newest count, and the rate-limit refusals of every scope (key,
// key × model, channel), each reported even before its first refusal.
func TestMetricsOfAFleet(t *testing.T) {
	node := cluster.New(cluster.Options{Name: "gw", Bind: "127.0.0.1:0", Window: time.Minute})
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, channel("oa", up.baseURL(), ""), proxy.Options{Cluster: node})
	if err := node.Start(tg.g.LimitCounts(), cluster.Handlers{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Leave(time.Second) })

	_, before := tg.do(t, "GET", "/metrics", "", "")
	for _, scope := range []string{"key", "key_model", "channel"} {
		if want := `rosetta_rate_limited_total{scope="` + scope + `"} 0`; !bytes.Contains(before, []byte(want)) {
			t.Errorf("before any refusal, metrics lack %s", want)
		}
	}

	other := cluster.New(cluster.Options{Name: "other", Bind: "127.0.0.1:0", Join: []string{node.Addr()}, Window: time.Minute})
	lim := ratelimit.New(other, time.Minute)
	if err := other.Start(lim, cluster.Handlers{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Leave(time.Second) })
	lim.Admit(lim.State("key:client"), ratelimit.Limits{RPM: 10}, 0)

	lag := regexp.MustCompile(`rosetta_cluster_counter_lag_seconds\{node="other"\} ([0-9.e+-]+)`)
	received := regexp.MustCompile(`rosetta_cluster_gossip_messages_total\{direction="received"\} ([0-9.e+]+)`)
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, metrics := tg.do(t, "GET", "/metrics", "", "")
		m, r := lag.FindSubmatch(metrics), received.FindSubmatch(metrics)
		live := regexp.MustCompile(`rosetta_cluster_members\{state="live"\} 2`).Match(metrics)
		if m != nil && r != nil && live {
			age, _ := strconv.ParseFloat(string(m[1]), 64)
			msgs, _ := strconv.ParseFloat(string(r[1]), 64)
			if age <= 0 || age > 3 || msgs < 1 {
				t.Fatalf("the other node's count is %v s old, %v messages received:\n%s", age, msgs, metrics)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("within 3 s, no live fleet of 2 with the other node's counter lag and messages received:\n%s", metrics)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
