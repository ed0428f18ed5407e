package config

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/dialects"
)

// TestChannelTypesFromRegistry checks that what differs between channel
// types comes from the styles of codec/dialects: every style is a type,
// with its base URL, key variable and default API version.
func TestChannelTypesFromRegistry(t *testing.T) {
	if got, want := channelTypes(), append(dialects.Names(), "demo"); !slices.Equal(got, want) {
		t.Errorf("channelTypes() = %v, want %v", got, want)
	}
	for _, d := range dialects.All {
		h := d.HTTP()
		if h.BaseURL == "" || h.KeyEnv == "" {
			t.Errorf("%s: codec.HTTP has BaseURL %q, KeyEnv %q; want both", d.Name(), h.BaseURL, h.KeyEnv)
			continue
		}
		yml := "channels: [{name: a, type: " + d.Name() + ", models: [m]}]"
		c, err := Parse([]byte(yml), "rosetta.yaml", envMap(map[string]string{h.KeyEnv: "k1, k2"}))
		if err != nil {
			t.Errorf("%s: %v", d.Name(), err)
			continue
		}
		ch := c.Channels[0]
		wantVersion := ""
		if h.VersionHeader != "" {
			wantVersion = h.DefaultVersion
		}
		if ch.BaseURL != strings.TrimSuffix(h.BaseURL, "/") || !slices.Equal(ch.APIKeys, []string{"k1", "k2"}) || ch.APIVersion != wantVersion {
			t.Errorf("%s: base_url %q, api_keys %v, api_version %q; want %q, keys from %s, %q",
				d.Name(), ch.BaseURL, ch.APIKeys, ch.APIVersion, h.BaseURL, h.KeyEnv, wantVersion)
		}
	}
}

func TestOrList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := orList(tc.in); got != tc.want {
			t.Errorf("orList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNoProxy keeps config below the request path: it knows the styles
// from codec/dialects, never from the proxy.
func TestNoProxy(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/rosetta-gateway/rosetta/proxy" || dep == "github.com/rosetta-gateway/rosetta/console" {
			t.Errorf("config depends on %s", dep)
		}
	}
}
