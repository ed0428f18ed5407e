package codec_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoNetwork guards DESIGN.md §1: the codec is pure translation. It may
// not import the network, the request path or any of our upper packages.
func TestNoNetwork(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{"net", "net/http", "github.com/valyala/fasthttp", "github.com/dgraph-io/ristretto/v2",
		"github.com/hashicorp/memberlist", "github.com/rosetta-gateway/rosetta/proxy",
		"github.com/rosetta-gateway/rosetta/store", "github.com/rosetta-gateway/rosetta/console",
		"github.com/rosetta-gateway/rosetta/cluster", "github.com/rosetta-gateway/rosetta/config"}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	if !deps["github.com/rosetta-gateway/rosetta/codec/rawjson"] {
		t.Fatalf("go list listed no codec packages:\n%s", out)
	}
	for _, b := range banned {
		if deps[b] {
			t.Errorf("codec depends on %s", b)
		}
	}
}
