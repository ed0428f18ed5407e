package store

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func newChannel(name string, keys ...string) *Channel {
	return &Channel{Name: name, Type: "anthropic", BaseURL: "https://api.anthropic.com", APIKeys: keys,
		Models: []string{"claude-sonnet-4"}, ModelMap: map[string]string{"smart": "claude-sonnet-4"},
		Priority: 1, Weight: 3, APIVersion: "2023-06-01", Enabled: true,
		Timeouts: Timeouts{Connect: time.Second, FirstByte: 2 * time.Second, Idle: 3 * time.Second, Total: time.Minute}}
}

func testChannels(t *testing.T, f *fixture) {
	c := newChannel("claude", "sk-ant-1", "sk-ant-2")
	must(t, f.s.CreateChannel(f.ctx, c))
	if c.ID == 0 || c.Created.IsZero() || !c.Updated.Equal(c.Created) {
		t.Fatalf("CreateChannel set ID %d, Created %v, Updated %v", c.ID, c.Created, c.Updated)
	}
	got, err := f.s.Channel(f.ctx, c.ID)
	must(t, err)
	wantEqual(t, "Channel", got, c)
	wantErr(t, "CreateChannel with a taken name", f.s.CreateChannel(f.ctx, newChannel("claude")), ErrConflict)
	_, err = f.s.Channel(f.ctx, c.ID+100)
	wantErr(t, "Channel of a missing id", err, ErrNotFound)

	bare := &Channel{Name: "demo", Type: "demo"} // no keys, no lists
	must(t, f.s.CreateChannel(f.ctx, bare))
	list, err := f.s.Channels(f.ctx)
	must(t, err)
	wantEqual(t, "Channels", list, []Channel{*c, *bare})

	created := c.Created
	time.Sleep(time.Millisecond) // so Updated can be seen to move
	c.Name, c.Type, c.BaseURL, c.APIKeys = "claude2", "openai", "https://example.com/v1", []string{"sk-3"}
	c.Models, c.ModelMap, c.Priority, c.Weight, c.APIVersion = nil, nil, 0, 1, ""
	c.Timeouts, c.Enabled = Timeouts{}, false
	must(t, f.s.UpdateChannel(f.ctx, c))
	if !c.Updated.After(created) {
		t.Fatalf("UpdateChannel set Updated %v, not after Created %v", c.Updated, created)
	}
	got, err = f.s.Channel(f.ctx, c.ID)
	must(t, err)
	wantEqual(t, "Channel after UpdateChannel", got, c)
	bare.Name = "claude2"
	wantErr(t, "UpdateChannel to a taken name", f.s.UpdateChannel(f.ctx, bare), ErrConflict)
	wantErr(t, "UpdateChannel of a missing id", f.s.UpdateChannel(f.ctx, &Channel{ID: c.ID + 100, Name: "x"}), ErrNotFound)

	must(t, f.s.DeleteChannel(f.ctx, c.ID))
	_, err = f.s.Channel(f.ctx, c.ID)
	wantErr(t, "Channel after DeleteChannel", err, ErrNotFound)
	wantErr(t, "DeleteChannel again", f.s.DeleteChannel(f.ctx, c.ID), ErrNotFound)
}

func testChannelKeysSealed(t *testing.T, f *fixture) {
	const plain = "sk-ant-api03-very-secret"
	a, b := newChannel("a", plain), newChannel("b", plain)
	must(t, f.s.CreateChannel(f.ctx, a))
	must(t, f.s.CreateChannel(f.ctx, b))
	sealed := func(c *Channel) []byte {
		var v []byte
		must(t, f.raw().QueryRowContext(f.ctx, `SELECT api_keys FROM channels WHERE id = $1`, c.ID).Scan(&v))
		return v
	}
	sa, sb := sealed(a), sealed(b)
	if len(sa) == 0 || bytes.Contains(sa, []byte(plain)) || bytes.Contains(sa, []byte("sk-ant")) {
		t.Fatalf("the api_keys column holds %q", sa)
	}
	if bytes.Equal(sa, sb) {
		t.Fatal("the same keys sealed twice gave the same bytes: the nonce is not fresh")
	}

	// Another secret key: the keys do not open, the error says why, and
	// the rest of the channel reads, so it can be repaired or deleted.
	other := f.open(t, Options{SecretKey: randomKey(t)})
	got, err := other.Channel(f.ctx, a.ID)
	must(t, err)
	wantErr(t, "KeysErr with another secret key", got.KeysErr, ErrSecretKey)
	if !strings.Contains(got.KeysErr.Error(), SecretKeyEnv) || !strings.Contains(got.KeysErr.Error(), `"a"`) {
		t.Fatalf("the error does not name the variable and the channel: %v", got.KeysErr)
	}
	if got.APIKeys != nil || got.Name != "a" || got.BaseURL != a.BaseURL {
		t.Fatalf("channel with unreadable keys: %+v", got)
	}
	list, err := other.Channels(f.ctx)
	must(t, err)
	if len(list) != 2 || list[0].KeysErr == nil || list[1].KeysErr == nil {
		t.Fatalf("Channels with another secret key: %+v", list)
	}
	wantErr(t, "UpdateChannel keeping unreadable keys", other.UpdateChannel(f.ctx, got), ErrSecretKey)
	got.APIKeys, got.KeysErr = []string{"sk-new"}, nil // given anew: saved under the other key
	must(t, other.UpdateChannel(f.ctx, got))
	if again, _ := other.Channel(f.ctx, a.ID); again.KeysErr != nil || again.APIKeys[0] != "sk-new" {
		t.Fatalf("after the keys were given anew: %+v", again)
	}
	must(t, other.DeleteChannel(f.ctx, b.ID))

	// No secret key: channels without API keys still work.
	none := f.open(t, Options{})
	got, err = none.Channel(f.ctx, a.ID)
	must(t, err)
	wantErr(t, "KeysErr with no secret key", got.KeysErr, ErrSecretKey)
	err = none.CreateChannel(f.ctx, newChannel("c", "sk-1"))
	wantErr(t, "CreateChannel with API keys and no secret key", err, ErrSecretKey)
	if !strings.Contains(err.Error(), SecretKeyEnv) {
		t.Fatalf("the error does not name %s: %v", SecretKeyEnv, err)
	}
	bare := newChannel("d")
	must(t, none.CreateChannel(f.ctx, bare))
	got, err = none.Channel(f.ctx, bare.ID)
	must(t, err)
	wantEqual(t, "Channel without API keys, no secret key", got, bare)

	// A tampered value fails too, never garbage.
	sa[len(sa)-1] ^= 1
	_, err = f.s.(*sqlStore).w.ExecContext(f.ctx, `UPDATE channels SET api_keys = $1 WHERE id = $2`, sa, a.ID)
	must(t, err)
	got, err = f.s.Channel(f.ctx, a.ID)
	must(t, err)
	wantErr(t, "KeysErr with a tampered value", got.KeysErr, ErrSecretKey)
}
