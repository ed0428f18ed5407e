package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/anthropic"
)

// TestAppendModelList: the shape of GET /v1/models (see the wire fixture
// models_list.json).
func TestAppendModelList(t *testing.T) {
	got := string(anthropic.AppendModelList(nil, []string{"claude-sonnet-4-5", "fast"}, 1760486400))
	want := `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"claude-sonnet-4-5","created_at":"2025-10-15T00:00:00Z"},` +
		`{"type":"model","id":"fast","display_name":"fast","created_at":"2025-10-15T00:00:00Z"}],` +
		`"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"fast"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(anthropic.AppendModelList(nil, nil, 0)); got != `{"data":[],"has_more":false,"first_id":null,"last_id":null}` {
		t.Errorf("empty list: %s", got)
	}
	// The fixture and our output have the same keys.
	var fixture, ours struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(readFile(t, wireDir+"/models_list.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &ours); err != nil {
		t.Fatal(err)
	}
	for k := range ours.Data[0] {
		if _, ok := fixture.Data[0][k]; !ok {
			t.Errorf("key %q is not in the API's model list", k)
		}
	}
}
