package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rosetta-gateway/rosetta/proxy"
)

// The console's channel list carries the channel types of the proxy's
// registry, which the console's channel form offers.
func TestConsoleChannelTypes(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rosetta.yaml")
	os.WriteFile(config, []byte("store: {driver: sqlite, dsn: '"+filepath.Join(dir, "rosetta.db")+"'}\n"), 0o600)
	base := start(t, config, "ROSETTA_ADMIN_PASSWORD="+browserAdminPassword)
	list := consoleClient(t, base).call("GET", "/console/api/channels", nil)
	raw, _ := list["types"].([]any)
	types := make([]string, len(raw))
	for i, v := range raw {
		types[i] = fmt.Sprint(v)
	}
	if want := proxy.ChannelTypes(); len(want) < 2 || !slices.Equal(types, want) {
		t.Errorf("console channel types %q, want the registry's %q", types, want)
	}
}
