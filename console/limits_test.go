package console

import (
	"context"
	"crypto/sha256"
	"reflect"
	"strconv"
	"testing"

	"github.com/rosetta-gateway/rosetta/store"
)

// TestKeyModelLimits: a key's limits on one model are set at creation,
// listed, replaced whole by an edit, kept by an edit that leaves them out,
// and removed by {}; each change drops the key from the gateway's caches.
func TestKeyModelLimits(t *testing.T) {
	e := newEnv(t)
	u := e.user("alice")
	ctx := context.Background()
	k := u.must("POST", "/console/api/keys", map[string]any{"name": "app", "rpm": 100,
		"model_limits": map[string]any{"gpt-4o": map[string]any{"rpm": 10}, "claude-opus": map[string]any{"rpm": 2, "tpm": 9000}}})
	id := int64(k["id"].(float64))
	hash := sha256.Sum256([]byte(k["secret"].(string)))
	path := "/console/api/keys/" + strconv.FormatInt(id, 10)
	wantStored := func(what string, want map[string]store.Limits) {
		t.Helper()
		got, err := e.st.Key(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ModelLimits, want) {
			t.Errorf("%s: stored model limits %v, want %v", what, got.ModelLimits, want)
		}
	}
	wantStored("created", map[string]store.Limits{"gpt-4o": {RPM: 10}, "claude-opus": {RPM: 2, TPM: 9000}})
	listed := u.must("GET", "/console/api/keys", nil)["keys"].([]any)[0].(map[string]any)["model_limits"]
	if want := map[string]any{"gpt-4o": map[string]any{"rpm": 10.0}, "claude-opus": map[string]any{"rpm": 2.0, "tpm": 9000.0}}; !reflect.DeepEqual(listed, want) {
		t.Errorf("listed model_limits %v, want %v", listed, want)
	}

	u.must("PATCH", path, map[string]any{"model_limits": map[string]any{"gpt-4o": map[string]any{"tpm": 500}}})
	wantStored("replaced", map[string]store.Limits{"gpt-4o": {TPM: 500}})
	if !e.gw.keyChanged(hash) {
		t.Error("an edit of the model limits did not call KeyChanged")
	}
	u.must("PATCH", path, map[string]any{"name": "renamed"})
	wantStored("an edit without them", map[string]store.Limits{"gpt-4o": {TPM: 500}})
	got := u.must("PATCH", path, map[string]any{"model_limits": map[string]any{}})
	wantStored("removed", nil)
	if ml, ok := got["model_limits"].(map[string]any); !ok || len(ml) != 0 {
		t.Errorf("a key without model limits shows %v, want {}", got["model_limits"])
	}
}

// TestChannelLimits: a console channel's rpm and tpm are stored, listed,
// changed by an edit (which reloads the gateway's channels), and kept by
// one that leaves them out.
func TestChannelLimits(t *testing.T) {
	e := newEnv(t)
	a := e.admin()
	ctx := context.Background()
	v := a.must("POST", "/console/api/channels", map[string]any{"name": "quota", "type": "demo", "models": []string{"m"},
		"rpm": 500, "tpm": 200000})
	if v["rpm"] != 500.0 || v["tpm"] != 200000.0 {
		t.Errorf("created channel shows rpm %v tpm %v", v["rpm"], v["tpm"])
	}
	chans, _ := e.st.Channels(ctx)
	if len(chans) != 1 || chans[0].RPM != 500 || chans[0].TPM != 200000 {
		t.Fatalf("stored channels: %+v", chans)
	}
	reloads := e.gw.reloads()
	a.must("PATCH", "/console/api/channels/quota", map[string]any{"rpm": 0, "tpm": 1000})
	a.must("PATCH", "/console/api/channels/quota", map[string]any{"weight": 2})
	ch, _ := e.st.Channel(ctx, chans[0].ID)
	if ch.RPM != 0 || ch.TPM != 1000 || ch.Weight != 2 {
		t.Errorf("after edits: rpm %d tpm %d weight %d, want 0, 1000, 2", ch.RPM, ch.TPM, ch.Weight)
	}
	if e.gw.reloads() != reloads+2 {
		t.Errorf("ChannelsChanged called %d times for two edits", e.gw.reloads()-reloads)
	}
	// Disabled, so not routed: the list still shows what is stored.
	a.must("PATCH", "/console/api/channels/quota", map[string]any{"enabled": false})
	for _, c := range a.must("GET", "/console/api/channels", nil)["channels"].([]any) {
		if c := c.(map[string]any); c["name"] == "quota" && (c["rpm"] != 0.0 || c["tpm"] != 1000.0) {
			t.Errorf("listed: rpm %v tpm %v, want 0 and 1000", c["rpm"], c["tpm"])
		}
	}
}

// TestLimitsBadInput: bad limits get a 400 naming the field, down to the
// model and rpm or tpm, and change nothing.
func TestLimitsBadInput(t *testing.T) {
	e, a, key := formsEnv(t)
	f := func(method, path string, body any, field, message string) {
		t.Helper()
		r := a.do(method, path, body)
		msg, _ := r.json()["error"].(map[string]any)["message"].(string)
		if r.status != 400 || r.errorField() != field || message != "" && msg != message {
			t.Errorf("%s %s %v: %d %s, want 400 naming %q", method, path, body, r.status, r.body, field)
		}
	}
	lim := func(model string, l any) map[string]any {
		return map[string]any{"name": "k", "model_limits": map[string]any{model: l}}
	}
	for _, tc := range []struct {
		body           map[string]any
		field, message string
	}{
		{lim("gpt-4o", map[string]any{"rpm": -1}), `model_limits["gpt-4o"].rpm`, `model_limits: "gpt-4o": rpm must be 0 or more, got -1`},
		{lim("gpt-4o", map[string]any{"rpm": 1, "tpm": -2}), `model_limits["gpt-4o"].tpm`, ""},
		{lim("gpt-4o", map[string]any{}), `model_limits["gpt-4o"]`, `model_limits: "gpt-4o": set rpm or tpm above 0, or remove the model`},
		{lim("gpt-*", map[string]any{"rpm": 1}), `model_limits["gpt-*"]`, `model_limits: "gpt-*": a limit is on one model, named exactly (no *)`},
		{lim("has space", map[string]any{"rpm": 1}), `model_limits["has space"]`, ""},
		{lim("", map[string]any{"rpm": 1}), `model_limits[""]`, ""},
		{lim("gpt-4o", map[string]any{"rpm": 1.5}), "model_limits.rpm", ""},
		{lim("gpt-4o", map[string]any{"rpm": 1, "rps": 3}), "rps", ""},
		{map[string]any{"name": "k", "model_limits": []string{"gpt-4o"}}, "model_limits", ""},
	} {
		f("POST", "/console/api/keys", tc.body, tc.field, tc.message)
		f("PATCH", key, tc.body, tc.field, tc.message)
	}
	many := map[string]any{}
	for i := range maxModelLimits + 1 {
		many["m"+strconv.Itoa(i)] = map[string]any{"rpm": 1}
	}
	f("PATCH", key, map[string]any{"model_limits": many}, "model_limits", "at most 100 model limits, got 101")
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"rpm": -1}, "rpm"},
		{map[string]any{"tpm": -1}, "tpm"},
		{map[string]any{"rpm": "10"}, "rpm"},
		{map[string]any{"tpm": 2.5}, "tpm"},
	} {
		f("PATCH", "/console/api/channels/mine", tc.body, tc.field, "")
		body := map[string]any{"name": "new", "type": "demo", "models": []string{"m"}}
		for k, v := range tc.body {
			body[k] = v
		}
		f("POST", "/console/api/channels", body, tc.field, "")
	}
	if keys, _ := e.st.Keys(context.Background(), 0); len(keys) != 1 || keys[0].ModelLimits != nil || keys[0].Name != "existing" {
		t.Errorf("refused input made or changed keys: %+v", keys)
	}
	if chans, _ := e.st.Channels(context.Background()); len(chans) != 1 || chans[0].RPM != 0 || chans[0].TPM != 0 {
		t.Errorf("refused changes reached the channels: %+v", chans)
	}
}
