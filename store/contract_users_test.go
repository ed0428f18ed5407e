package store

import (
	"crypto/sha256"
	"testing"
	"time"
)

func testUsers(t *testing.T, f *fixture) {
	before := time.Now().Add(-time.Second)
	a, b := f.user(t, "ann"), f.user(t, "bob")
	if a.ID == 0 || b.ID == a.ID || a.Created.Before(before) {
		t.Fatalf("CreateUser set ID %d (and %d for the second), Created %v", a.ID, b.ID, a.Created)
	}
	got, err := f.s.User(f.ctx, a.ID)
	must(t, err)
	wantEqual(t, "User", got, a)
	got, err = f.s.UserByName(f.ctx, "bob")
	must(t, err)
	wantEqual(t, "UserByName", got, b)

	wantErr(t, "CreateUser with a taken name", f.s.CreateUser(f.ctx, &User{Name: "ann", Role: RoleUser}), ErrConflict)
	_, err = f.s.User(f.ctx, b.ID+100)
	wantErr(t, "User of a missing id", err, ErrNotFound)
	_, err = f.s.UserByName(f.ctx, "nobody")
	wantErr(t, "UserByName of a missing name", err, ErrNotFound)

	a.Name, a.PasswordHash, a.Role, a.Disabled = "anne", "$argon2id$y", RoleAdmin, true
	must(t, f.s.UpdateUser(f.ctx, a))
	got, err = f.s.User(f.ctx, a.ID)
	must(t, err)
	wantEqual(t, "User after UpdateUser", got, a)
	must(t, f.s.SetPassword(f.ctx, a.ID, "$argon2id$z"))
	a.PasswordHash = "$argon2id$z"
	got, err = f.s.User(f.ctx, a.ID)
	must(t, err)
	wantEqual(t, "User after SetPassword", got, a)
	wantErr(t, "SetPassword of a missing id", f.s.SetPassword(f.ctx, b.ID+100, "x"), ErrNotFound)
	b.Name = "anne"
	wantErr(t, "UpdateUser to a taken name", f.s.UpdateUser(f.ctx, b), ErrConflict)
	wantErr(t, "UpdateUser of a missing id", f.s.UpdateUser(f.ctx, &User{ID: b.ID + 100, Name: "x"}), ErrNotFound)

	list, err := f.s.Users(f.ctx)
	must(t, err)
	b.Name = "bob"
	wantEqual(t, "Users", list, []User{*a, *b})

	must(t, f.s.DeleteUser(f.ctx, a.ID))
	_, err = f.s.User(f.ctx, a.ID)
	wantErr(t, "User after DeleteUser", err, ErrNotFound)
	wantErr(t, "DeleteUser again", f.s.DeleteUser(f.ctx, a.ID), ErrNotFound)
	list, err = f.s.Users(f.ctx)
	must(t, err)
	wantEqual(t, "Users after DeleteUser", list, []User{*b})
}

func testDeleteUserCascades(t *testing.T, f *fixture) {
	gone, kept := f.user(t, "gone"), f.user(t, "kept")
	goneKeys := []*Key{f.key(t, gone.ID, "g1"), f.key(t, gone.ID, "g2")}
	keptKey := f.key(t, kept.ID, "k1")
	var sessions [][sha256.Size]byte // two of gone's, then one of kept's
	for i, u := range []*User{gone, gone, kept} {
		s := &Session{Hash: sha256.Sum256([]byte{byte(i)}), UserID: u.ID, CSRF: "c", Expires: time.Now().Add(time.Hour)}
		must(t, f.s.CreateSession(f.ctx, s))
		sessions = append(sessions, s.Hash)
	}
	must(t, f.s.AddUsage(f.ctx, []Usage{{Time: at(0), KeyID: goneKeys[0].ID, KeyName: "g1", Status: 200, Input: 7}}))

	must(t, f.s.DeleteUser(f.ctx, gone.ID))
	for _, k := range goneKeys {
		_, err := f.s.Key(f.ctx, k.ID)
		wantErr(t, "Key of a deleted user", err, ErrNotFound)
		_, err = f.s.KeyByHash(f.ctx, k.Hash)
		wantErr(t, "KeyByHash of a deleted user", err, ErrNotFound)
	}
	for i := range 2 {
		_, err := f.s.Session(f.ctx, sessions[i])
		wantErr(t, "Session of a deleted user", err, ErrNotFound)
	}
	if _, err := f.s.Session(f.ctx, sessions[2]); err != nil {
		t.Fatalf("the other user's session: %v", err)
	}
	keys, err := f.s.Keys(f.ctx, 0)
	must(t, err)
	wantEqual(t, "Keys after DeleteUser", keys, []Key{*keptKey})
	// Usage outlives its key: the row keeps the key's id and name.
	spend, err := f.s.Spend(f.ctx, []int64{goneKeys[0].ID})
	must(t, err)
	wantEqual(t, "Spend of a deleted key", spend, map[int64]Spend{goneKeys[0].ID: {Requests: 1, Input: 7}})
}

func testDisabledOwner(t *testing.T, f *fixture) {
	u := f.user(t, "ann")
	k := f.key(t, u.ID, "a")
	none := f.key(t, 0, "cli") // no owner: nobody to disable
	u.Disabled = true
	must(t, f.s.UpdateUser(f.ctx, u))
	got, err := f.s.KeyByHash(f.ctx, k.Hash)
	must(t, err)
	if !got.OwnerDisabled || got.Usable(time.Now()) {
		t.Fatalf("key of a disabled user: OwnerDisabled %v, usable %v", got.OwnerDisabled, got.Usable(time.Now()))
	}
	if !got.Enabled {
		t.Fatal("disabling the owner changed the key's own Enabled")
	}
	keys, err := f.s.Keys(f.ctx, 0)
	must(t, err)
	if len(keys) != 2 || !keys[0].OwnerDisabled || keys[1].OwnerDisabled {
		t.Fatalf("Keys: %+v", keys)
	}
	u.Disabled = false
	must(t, f.s.UpdateUser(f.ctx, u))
	for _, k := range []*Key{k, none} {
		got, err = f.s.Key(f.ctx, k.ID)
		must(t, err)
		if !got.Usable(time.Now()) {
			t.Fatalf("key %q after its owner was enabled: %+v", k.Name, got)
		}
	}
}

func testSessions(t *testing.T, f *fixture) {
	u, other := f.user(t, "ann"), f.user(t, "bob")
	live := &Session{Hash: sha256.Sum256([]byte("live")), UserID: u.ID, CSRF: "tok", Expires: at(1000 * time.Hour)}
	must(t, f.s.CreateSession(f.ctx, live))
	if live.Created.IsZero() {
		t.Fatal("CreateSession left Created zero")
	}
	got, err := f.s.Session(f.ctx, live.Hash)
	must(t, err)
	wantEqual(t, "Session", got, live)
	wantErr(t, "CreateSession with a taken hash", f.s.CreateSession(f.ctx, live), ErrConflict)
	orphan := &Session{Hash: sha256.Sum256([]byte("orphan")), UserID: other.ID + 100, Expires: at(time.Hour)}
	wantErr(t, "CreateSession of a missing user", f.s.CreateSession(f.ctx, orphan), ErrNotFound)

	expired := &Session{Hash: sha256.Sum256([]byte("old")), UserID: u.ID, Expires: time.Now().Add(-time.Second)}
	must(t, f.s.CreateSession(f.ctx, expired))
	_, err = f.s.Session(f.ctx, expired.Hash)
	wantErr(t, "Session that has expired", err, ErrNotFound)
	// The next login sweeps expired sessions away.
	must(t, f.s.CreateSession(f.ctx, &Session{Hash: sha256.Sum256([]byte("b1")), UserID: other.ID, Expires: at(1000 * time.Hour)}))
	if n := f.count(t, `SELECT COUNT(*) FROM sessions WHERE hash = $1`, expired.Hash[:]); n != 0 {
		t.Fatal("an expired session is still stored after the next CreateSession")
	}

	must(t, f.s.DeleteSession(f.ctx, live.Hash))
	_, err = f.s.Session(f.ctx, live.Hash)
	wantErr(t, "Session after DeleteSession", err, ErrNotFound)
	wantErr(t, "DeleteSession again", f.s.DeleteSession(f.ctx, live.Hash), ErrNotFound)

	must(t, f.s.CreateSession(f.ctx, &Session{Hash: sha256.Sum256([]byte("a2")), UserID: u.ID, Expires: at(1000 * time.Hour)}))
	must(t, f.s.DeleteUserSessions(f.ctx, u.ID))
	_, err = f.s.Session(f.ctx, sha256.Sum256([]byte("a2")))
	wantErr(t, "Session after DeleteUserSessions", err, ErrNotFound)
	if _, err := f.s.Session(f.ctx, sha256.Sum256([]byte("b1"))); err != nil {
		t.Fatalf("DeleteUserSessions took another user's session: %v", err)
	}
	must(t, f.s.DeleteUserSessions(f.ctx, u.ID)) // none left is not an error
}

// wantStoredKey fails unless the store reads k back, by id and by hash.
func wantStoredKey(t *testing.T, f *fixture, what string, k *Key) {
	t.Helper()
	got, err := f.s.Key(f.ctx, k.ID)
	must(t, err)
	wantEqual(t, "Key, "+what, got, k)
	got, err = f.s.KeyByHash(f.ctx, k.Hash)
	must(t, err)
	wantEqual(t, "KeyByHash, "+what, got, k)
}

func testKeys(t *testing.T, f *fixture) {
	ann, bob := f.user(t, "ann"), f.user(t, "bob")
	k := &Key{Name: "app", OwnerID: ann.ID, Hash: sha256.Sum256([]byte("secret")), Prefix: "sk-rst-ab12",
		Models: []string{"gpt-4o-mini", "claude-*"}, RPM: 60, TPM: 100000, Expires: at(24 * time.Hour), Enabled: true}
	must(t, f.s.CreateKey(f.ctx, k))
	if k.ID == 0 || k.Created.IsZero() {
		t.Fatalf("CreateKey set ID %d, Created %v", k.ID, k.Created)
	}
	wantStoredKey(t, f, "a new key", k)
	_, err := f.s.KeyByHash(f.ctx, sha256.Sum256([]byte("other")))
	wantErr(t, "KeyByHash of an unknown hash", err, ErrNotFound)
	_, err = f.s.Key(f.ctx, k.ID+100)
	wantErr(t, "Key of a missing id", err, ErrNotFound)
	wantErr(t, "CreateKey with a taken hash", f.s.CreateKey(f.ctx, &Key{Name: "dup", OwnerID: bob.ID, Hash: k.Hash}), ErrConflict)
	wantErr(t, "CreateKey for a missing owner", f.s.CreateKey(f.ctx, &Key{Name: "x", OwnerID: bob.ID + 100}), ErrNotFound)

	b1, none := f.key(t, bob.ID, "b1"), f.key(t, 0, "cli") // OwnerID 0: no owner
	keys, err := f.s.Keys(f.ctx, bob.ID)
	must(t, err)
	wantEqual(t, "Keys of an owner", keys, []Key{*b1})
	keys, err = f.s.Keys(f.ctx, 0)
	must(t, err)
	wantEqual(t, "Keys of everyone", keys, []Key{*k, *b1, *none})

	// UpdateKey changes what it lists and nothing else.
	want := *k
	want.Name, want.Models, want.RPM, want.TPM, want.Expires, want.Enabled = "app2", []string{"*"}, 1, 2, time.Time{}, false
	upd := want
	upd.Hash, upd.Prefix, upd.OwnerID, upd.Created = sha256.Sum256([]byte("changed")), "changed", bob.ID, at(0)
	must(t, f.s.UpdateKey(f.ctx, &upd))
	got, err := f.s.Key(f.ctx, k.ID)
	must(t, err)
	wantEqual(t, "Key after UpdateKey", got, &want)
	if got.Usable(time.Now()) {
		t.Fatal("a disabled key is usable")
	}
	// An edit from a copy read before the revoke keeps the key revoked.
	stale := *got
	stale.Name, stale.Enabled = "app3", true
	must(t, f.s.UpdateKey(f.ctx, &stale))
	if stale.Enabled {
		t.Fatal("UpdateKey left k.Enabled true on a revoked key")
	}
	got, err = f.s.Key(f.ctx, k.ID)
	must(t, err)
	if got.Name != "app3" || got.Enabled {
		t.Fatalf("a stale edit of a revoked key: name %q, enabled %v; want app3, still revoked", got.Name, got.Enabled)
	}
	wantErr(t, "UpdateKey of a missing id", f.s.UpdateKey(f.ctx, &Key{ID: k.ID + 100}), ErrNotFound)

	must(t, f.s.DeleteKey(f.ctx, k.ID))
	_, err = f.s.Key(f.ctx, k.ID)
	wantErr(t, "Key after DeleteKey", err, ErrNotFound)
	wantErr(t, "DeleteKey again", f.s.DeleteKey(f.ctx, k.ID), ErrNotFound)
}

func testTouchKeys(t *testing.T, f *fixture) {
	u := f.user(t, "ann")
	a, b := f.key(t, u.ID, "a"), f.key(t, u.ID, "b")
	lastUsed := func(k *Key) time.Time {
		got, err := f.s.Key(f.ctx, k.ID)
		must(t, err)
		return got.LastUsed
	}
	must(t, f.s.TouchKeys(f.ctx, nil))
	must(t, f.s.TouchKeys(f.ctx, map[int64]time.Time{a.ID: at(time.Minute), b.ID: at(2 * time.Minute), b.ID + 100: at(0)}))
	wantEqual(t, "LastUsed after the first touch", lastUsed(a), at(time.Minute))
	wantEqual(t, "LastUsed after the first touch", lastUsed(b), at(2*time.Minute))
	// An older time (a slow node's batch arriving late) does not move it back.
	must(t, f.s.TouchKeys(f.ctx, map[int64]time.Time{a.ID: at(0), b.ID: at(3 * time.Minute)}))
	wantEqual(t, "LastUsed after an older touch", lastUsed(a), at(time.Minute))
	wantEqual(t, "LastUsed after a newer touch", lastUsed(b), at(3*time.Minute))
}

func testKeyChanges(t *testing.T, f *fixture) {
	_, start, err := f.s.KeyChanges(f.ctx, -1, 0)
	must(t, err)
	ann, bob := f.user(t, "ann"), f.user(t, "bob")
	a, b := f.key(t, ann.ID, "a"), f.key(t, ann.ID, "b")
	c := f.key(t, bob.ID, "c")
	_, last, err := f.s.KeyChanges(f.ctx, -1, 0)
	must(t, err)
	if last != start {
		t.Fatalf("creating users and keys journaled changes: %d → %d", start, last)
	}

	a.Name = "a2"
	must(t, f.s.UpdateKey(f.ctx, a))
	must(t, f.s.DeleteKey(f.ctx, b.ID))
	bob.Disabled = true
	must(t, f.s.UpdateUser(f.ctx, bob))
	must(t, f.s.DeleteUser(f.ctx, ann.ID)) // a goes with ann
	wantErr(t, "UpdateKey of a deleted key", f.s.UpdateKey(f.ctx, b), ErrNotFound)

	hashes, last, err := f.s.KeyChanges(f.ctx, start, 100)
	must(t, err)
	wantEqual(t, "changed keys", hashes, [][sha256.Size]byte{a.Hash, b.Hash, c.Hash, a.Hash})
	first, mid, err := f.s.KeyChanges(f.ctx, start, 2)
	must(t, err)
	wantEqual(t, "the first two changes", first, [][sha256.Size]byte{a.Hash, b.Hash})
	rest, end, err := f.s.KeyChanges(f.ctx, mid, 100)
	must(t, err)
	wantEqual(t, "the changes after the first two", rest, [][sha256.Size]byte{c.Hash, a.Hash})
	if end != last {
		t.Fatalf("paging ended at %d, the whole read at %d", end, last)
	}
	none, again, err := f.s.KeyChanges(f.ctx, last, 100)
	must(t, err)
	if len(none) != 0 || again != last {
		t.Fatalf("after the last change: %d hashes, position %d (want %d)", len(none), again, last)
	}
	_, latest, err := f.s.KeyChanges(f.ctx, -1, 0)
	must(t, err)
	if latest != last {
		t.Fatalf("the latest change is %d, the last read %d", latest, last)
	}
}
