package store

import (
	"crypto/sha256"
	"testing"
	"time"
)

// testKeyModelLimits: a key's limits on one model are kept, listed,
// replaced and removed with the key; none read back as nil.
func testKeyModelLimits(t *testing.T, f *fixture) {
	k := &Key{Name: "app", Hash: sha256.Sum256([]byte("limited")), Prefix: "sk-rst-lim1", Models: []string{"*"},
		RPM: 100, ModelLimits: map[string]Limits{"gpt-4o": {RPM: 10, TPM: 5000}, "claude-opus": {TPM: 900}},
		Enabled: true}
	must(t, f.s.CreateKey(f.ctx, k))
	wantStoredKey(t, f, "a key with model limits", k)

	k.ModelLimits = map[string]Limits{"gpt-4o": {RPM: 20}}
	must(t, f.s.UpdateKey(f.ctx, k))
	list, err := f.s.Keys(f.ctx, 0)
	must(t, err)
	wantEqual(t, "Keys after replacing the model limits", list, []Key{*k})

	k.ModelLimits = nil
	must(t, f.s.UpdateKey(f.ctx, k))
	wantStoredKey(t, f, "after removing the model limits", k)
	if n := f.count(t, `SELECT COUNT(*) FROM api_keys WHERE model_limits = '{}'`); n != 1 {
		t.Fatalf("a key without model limits: %d rows with model_limits '{}'", n)
	}
}

// testChannelLimits: a channel's rpm and tpm are kept and changed with it.
func testChannelLimits(t *testing.T, f *fixture) {
	c := newChannel("quota", "sk-1")
	c.RPM, c.TPM = 500, 200000
	must(t, f.s.CreateChannel(f.ctx, c))
	got, err := f.s.Channel(f.ctx, c.ID)
	must(t, err)
	wantEqual(t, "Channel with limits", got, c)
	c.RPM, c.TPM = 0, 1
	must(t, f.s.UpdateChannel(f.ctx, c))
	list, err := f.s.Channels(f.ctx)
	must(t, err)
	wantEqual(t, "Channels after changing the limits", list, []Channel{*c})
}

// testLimitsMigration writes a key and a channel into the schema of
// migration 0005 and opens the store, which applies 0006: both read back
// with no limits, and take limits afterwards.
func testLimitsMigration(t *testing.T, f *fixture) {
	old, dsn := migratedBefore(t, f, 6)
	hash := sha256.Sum256([]byte("old key"))
	_, err := old.w.ExecContext(f.ctx, `INSERT INTO api_keys (name, hash, prefix, models, rpm, tpm, expires_ns, enabled,
		created_ns, last_used_ns) VALUES ('old', $1, 'sk-rst-old1', '["*"]', 60, 0, 0, $2, $3, 0)`, hash[:], true, toNS(at(0)))
	must(t, err)
	_, err = old.w.ExecContext(f.ctx, `INSERT INTO channels (name, type, base_url, models, model_map, priority, weight,
		api_version, connect_ns, first_byte_ns, idle_ns, total_ns, enabled, created_ns, updated_ns)
		VALUES ('old', 'demo', '', '["demo"]', '{}', 0, 1, '', 0, 0, 0, 0, $1, $2, $2)`, true, toNS(at(0)))
	must(t, err)
	g := reopen(t, f, old, dsn)
	// A node of a build from before 0006 still creates keys and channels,
	// naming none of the new columns.
	_, err = g.s.(*sqlStore).w.ExecContext(f.ctx, `INSERT INTO channels (name, type, base_url, models, model_map,
		priority, weight, api_version, connect_ns, first_byte_ns, idle_ns, total_ns, enabled, created_ns, updated_ns)
		VALUES ('older', 'demo', '', '["demo"]', '{}', 0, 1, '', 0, 0, 0, 0, $1, $2, $2)`, true, toNS(at(0)))
	must(t, err)
	must(t, g.s.DeleteChannel(f.ctx, int64(g.count(t, `SELECT id FROM channels WHERE name = 'older' AND rpm = 0 AND tpm = 0`))))
	k, err := g.s.KeyByHash(f.ctx, hash)
	must(t, err)
	if k.RPM != 60 || k.ModelLimits != nil {
		t.Fatalf("the old key after the migration: rpm %d, model limits %v; want 60 and none", k.RPM, k.ModelLimits)
	}
	chans, err := g.s.Channels(f.ctx)
	must(t, err)
	if len(chans) != 1 || chans[0].RPM != 0 || chans[0].TPM != 0 {
		t.Fatalf("channels after the migration: %+v; want the old one without limits", chans)
	}
	k.ModelLimits = map[string]Limits{"demo": {RPM: 3}}
	must(t, g.s.UpdateKey(f.ctx, k))
	ch := &chans[0]
	ch.TPM = 7
	time.Sleep(time.Millisecond) // Updated moves
	must(t, g.s.UpdateChannel(f.ctx, ch))
	gotKey, err := g.s.Key(f.ctx, k.ID)
	must(t, err)
	wantEqual(t, "the old key given model limits", gotKey.ModelLimits, k.ModelLimits)
	gotCh, err := g.s.Channel(f.ctx, ch.ID)
	must(t, err)
	wantEqual(t, "the old channel given a tpm", gotCh, ch)
}
