package proxy_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/proxy"
)

// A gateway in a cluster reports it: /readyz lists the members, /metrics
// has the fleet's gauges and counters.
func TestReadyzAndMetricsOfACluster(t *testing.T) {
	node := cluster.New(cluster.Options{Name: "solo", Bind: "127.0.0.1:0", Window: time.Minute, Version: "v-test"})
	up := newMock(t, jsonReply(200, fixture(t, "chat_response.json")))
	tg := startGatewayWith(t, channel("oa", up.baseURL(), ""), proxy.Options{Cluster: node})
	if err := node.Start(tg.g.LimitCounts(), cluster.Handlers{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Leave(time.Second) })
	if resp, body := tg.do(t, "POST", "/v1/chat/completions", limitedKey, miniBody); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}

	_, body := tg.do(t, "GET", "/readyz", "", "")
	var r struct {
		Status  string
		Cluster struct {
			Node        string
			Live, Known int
			Members     []struct{ Name, Addr, Version string }
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	c := r.Cluster
	if r.Status != "ready" || c.Node != "solo" || c.Live != 1 || c.Known != 1 || len(c.Members) != 1 ||
		c.Members[0].Version != "v-test" || c.Members[0].Addr != node.Addr() {
		t.Fatalf("/readyz: %s", body)
	}
	_, metrics := tg.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{`rosetta_cluster_members{state="live"} 1`, `rosetta_cluster_members{state="known"} 1`,
		`rosetta_cluster_gossip_bytes_total{direction="sent"}`, `rosetta_cluster_health_score 0`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
