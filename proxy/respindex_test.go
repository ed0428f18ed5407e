package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// TestRespIndexMemoryOnly: without a store, responses are found from
// memory, forgotten past the retention or, the oldest first, past the
// bound; a response's owner never changes.
func TestRespIndexMemoryOnly(t *testing.T) {
	ix := newRespIndex(nil, time.Hour, slog.New(slog.DiscardHandler))
	defer ix.close()
	ctx, now := context.Background(), time.Now()
	owner, thief := [32]byte{1}, [32]byte{2}
	for i := range 5 {
		ix.remember(&store.Response{ID: fmt.Sprint("resp_", i), KeyHash: owner, Created: now.Add(time.Duration(i) * time.Second),
			Status: "in_progress"})
	}
	ix.remember(&store.Response{ID: "resp_old", KeyHash: owner, Created: now.Add(-2 * time.Hour)})
	ix.remember(&store.Response{ID: "resp_0", KeyHash: thief, Status: "completed"})
	ix.remember(&store.Response{ID: "resp_1", KeyHash: owner, Status: "completed"})
	if r, _ := ix.find(ctx, "resp_0"); r == nil || r.KeyHash != owner || r.Status != "in_progress" {
		t.Fatalf("another key changed resp_0: %+v", r)
	}
	if r, _ := ix.find(ctx, "resp_1"); r == nil || r.Status != "completed" {
		t.Fatalf("resp_1: %+v", r)
	}
	ix.dropOld(now.Add(-ix.keep), 3)
	for id, want := range map[string]bool{"resp_old": false, "resp_0": false, "resp_1": false, "resp_2": true, "resp_4": true} {
		if r, _ := ix.find(ctx, id); (r != nil) != want {
			t.Errorf("%s kept: %v, want %v", id, r != nil, want)
		}
	}
	if err := ix.forget(ctx, "resp_4"); err != nil {
		t.Fatal(err)
	}
	if r, _ := ix.find(ctx, "resp_4"); r != nil {
		t.Fatal("a forgotten response is found")
	}
}
