package store

import (
	"crypto/sha256"
	"reflect"
	"testing"
	"time"
)

// testResponses: a response reads back as written (an incomplete one with
// its reason); a second write under the same key updates its status (and
// reason) and the items it sets, one under
// another key changes nothing; it is deleted by id, by retention (in
// batches), and with its key or its key's owner.
func testResponses(t *testing.T, f *fixture) {
	u := f.user(t, "owner")
	k1, k2 := f.key(t, u.ID, "k1"), f.key(t, u.ID, "k2")
	created := time.Unix(1764158400, 123).UTC()
	native := Response{ID: "resp_n1", KeyHash: k1.Hash, KeyID: k1.ID, Channel: "oa", KeyIndex: 1, Model: "fast",
		Created: created, Status: "in_progress", Native: true}
	stored := Response{ID: "resp_s1", KeyHash: k2.Hash, KeyID: k2.ID, Channel: "claude", Model: "sonnet",
		Created: created, Status: "completed", Input: []byte(`[{"type":"message"}]`),
		Output: []byte(`[{"type":"message","id":"msg_1"}]`), Usage: []byte(`{"input_tokens":3}`)}
	cut := stored
	cut.ID, cut.Status, cut.Incomplete = "resp_s2", "incomplete", "max_output_tokens"
	must(t, f.s.PutResponses(f.ctx, []Response{native, stored, cut}))
	for _, want := range []Response{native, stored, cut} {
		got, err := f.s.Response(f.ctx, want.ID)
		must(t, err)
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("read back\n got %+v\nwant %+v", *got, want)
		}
	}

	done := native
	done.Status, done.Channel = "completed", "other" // only the status moves
	taken := stored
	taken.KeyHash, taken.Status, taken.Output = k1.Hash, "failed", []byte(`[]`)
	must(t, f.s.PutResponses(f.ctx, []Response{done, taken}))
	if got, _ := f.s.Response(f.ctx, native.ID); got.Status != "completed" || got.Channel != "oa" {
		t.Fatalf("updated native: %+v", got)
	}
	if got, _ := f.s.Response(f.ctx, stored.ID); !reflect.DeepEqual(*got, stored) {
		t.Fatalf("another key changed a response: %+v", got)
	}
	// The reason goes with the status it explains.
	resumed := cut
	resumed.Status, resumed.Incomplete = "completed", ""
	must(t, f.s.PutResponses(f.ctx, []Response{resumed}))
	if got, _ := f.s.Response(f.ctx, cut.ID); !reflect.DeepEqual(*got, resumed) {
		t.Fatalf("a response no longer incomplete: %+v", got)
	}

	must(t, f.s.DeleteResponse(f.ctx, native.ID))
	_, err := f.s.Response(f.ctx, native.ID)
	wantErr(t, "deleted response", err, ErrNotFound)
	wantErr(t, "delete twice", f.s.DeleteResponse(f.ctx, native.ID), ErrNotFound)

	must(t, f.s.DeleteKey(f.ctx, k2.ID))
	_, err = f.s.Response(f.ctx, stored.ID)
	wantErr(t, "response of a deleted key", err, ErrNotFound)

	k3 := f.key(t, u.ID, "k3")
	must(t, f.s.PutResponses(f.ctx, []Response{{ID: "resp_u", KeyHash: k3.Hash, Created: created, Status: "completed"}}))
	must(t, f.s.DeleteUser(f.ctx, u.ID))
	_, err = f.s.Response(f.ctx, "resp_u")
	wantErr(t, "response of a deleted user's key", err, ErrNotFound)
}

// testDeleteResponsesBefore: retention deletes the responses made before
// the time, more than one batch of them, and keeps the others.
func testDeleteResponsesBefore(t *testing.T, f *fixture) {
	base := time.Unix(1764158400, 0)
	hash := sha256.Sum256([]byte("static key"))
	// More old rows than one DELETE takes, written in one statement.
	nOld := responsesPruneBatch + 3
	if _, err := f.s.(*sqlStore).w.ExecContext(f.ctx, `INSERT INTO responses (`+responseColumns+`)
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
		SELECT 'resp_old' || i, $2, 0, '', 0, '', CAST($3 AS BIGINT) + i, 'completed', FALSE, NULL, NULL, NULL, NULL FROM n`,
		nOld-1, hash[:], base.UnixNano()); err != nil {
		t.Fatal(err)
	}
	must(t, f.s.PutResponses(f.ctx, []Response{{ID: "resp_new", KeyHash: hash, Created: base.Add(time.Hour), Status: "completed"}}))
	n, err := f.s.DeleteResponsesBefore(f.ctx, base.Add(time.Minute))
	must(t, err)
	if n != int64(nOld) {
		t.Fatalf("deleted %d, want %d", n, nOld)
	}
	if left := f.count(t, `SELECT COUNT(*) FROM responses`); left != 1 {
		t.Fatalf("%d responses left, want 1", left)
	}
	if _, err := f.s.Response(f.ctx, "resp_new"); err != nil {
		t.Fatal(err)
	}
}
