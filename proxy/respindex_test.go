package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
	"github.com/rosetta-gateway/rosetta/store"
)

// TestRespIndexMemoryOnly: without a store, responses are found from
// memory, forgotten past the retention or, the oldest first, past the
// bound; a response's owner never changes.
func TestRespIndexMemoryOnly(t *testing.T) {
	ix := newRespIndex(nil, time.Hour, slog.New(slog.DiscardHandler))
	defer ix.close(context.Background())
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

// flakyResponses is a store whose responses' writes fail while down.
type flakyResponses struct {
	store.Store
	mu      sync.Mutex
	down    bool
	written map[string]store.Response
}

func (f *flakyResponses) PutResponses(_ context.Context, list []store.Response) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errors.New("store down")
	}
	for _, r := range list {
		f.written[r.ID] = r
	}
	return nil
}

func (f *flakyResponses) Response(_ context.Context, id string) (*store.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.written[id]; ok {
		return &r, nil
	}
	return nil, store.ErrNotFound
}

func (f *flakyResponses) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.written[id]
	return ok
}

// TestRespIndexStoreOutage: while the store fails, responses are found
// in memory; once it is back they are written, with their last status, and
// close writes what is left.
func TestRespIndexStoreOutage(t *testing.T) {
	st := &flakyResponses{down: true, written: map[string]store.Response{}}
	ix := newRespIndex(st, time.Hour, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	ix.remember(&store.Response{ID: "resp_1", Status: "in_progress"})
	ix.remember(&store.Response{ID: "resp_1", Status: "completed"})
	time.Sleep(20 * time.Millisecond) // a failed write or two
	if r, err := ix.find(ctx, "resp_1"); err != nil || r == nil || r.Status != "completed" || st.has("resp_1") {
		t.Fatalf("during the outage: %+v %v, written %v", r, err, st.has("resp_1"))
	}
	st.mu.Lock()
	st.down = false
	st.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for !st.has("resp_1") {
		if time.Now().After(deadline) {
			t.Fatal("not written once the store was back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, _ := st.Response(ctx, "resp_1"); r.Status != "completed" {
		t.Fatalf("written %+v", r)
	}
	ix.remember(&store.Response{ID: "resp_2", Status: "completed"})
	ix.close(context.Background())
	if !st.has("resp_2") {
		t.Fatal("close did not write what was pending")
	}
}

// heldResponses is a store whose writes of responses wait until released,
// as a slow store's do; its deletes do not.
type heldResponses struct {
	flakyResponses
	writing chan struct{} // a write began
	release chan struct{}
}

func (h *heldResponses) PutResponses(ctx context.Context, list []store.Response) error {
	h.writing <- struct{}{}
	<-h.release
	return h.flakyResponses.PutResponses(ctx, list)
}

func (h *heldResponses) DeleteResponse(_ context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.written[id]; !ok {
		return store.ErrNotFound
	}
	delete(h.written, id)
	return nil
}

// TestRespIndexForgetDuringWrite: a delete answers while a write of
// responses is held up by a slow store, whether the write holds the
// response deleted or not; the response is not found from then on, and
// once the write is done it is gone from the store too.
func TestRespIndexForgetDuringWrite(t *testing.T) {
	st := &heldResponses{flakyResponses: flakyResponses{written: map[string]store.Response{"resp_old": {ID: "resp_old"}}},
		writing: make(chan struct{}, 1), release: make(chan struct{})}
	ix := newRespIndex(st, time.Hour, slog.New(slog.DiscardHandler))
	released := false
	defer func() {
		if !released {
			close(st.release)
		}
		ix.close(context.Background())
	}()
	ctx := context.Background()
	ix.remember(&store.Response{ID: "resp_new", Status: "completed"})
	select {
	case <-st.writing:
	case <-time.After(5 * time.Second):
		t.Fatal("no write began")
	}
	for _, id := range []string{"resp_old", "resp_new"} { // not in the write held, in it
		forgot := make(chan error, 1)
		go func() { forgot <- ix.forget(ctx, id) }()
		select {
		case err := <-forgot:
			if err != nil {
				t.Fatalf("forget %s: %v", id, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("forget %s waits for the write under way", id)
		}
		if r, err := ix.find(ctx, id); r != nil || err != nil {
			t.Errorf("%s found once forgotten: %+v %v", id, r, err)
		}
	}
	if st.has("resp_old") {
		t.Error("resp_old, not in the write, is still in the store")
	}
	close(st.release)
	released = true
	deadline := time.Now().Add(5 * time.Second)
	for st.has("resp_new") || ix.goneCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("resp_new in the store %v, %d deletes owed, after the write", st.has("resp_new"), ix.goneCount())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, _ := ix.find(ctx, "resp_new"); r != nil {
		t.Errorf("resp_new found after the write: %+v", r)
	}
}

// failingDeletes is heldResponses whose next fails deletes fail.
type failingDeletes struct {
	heldResponses
	fails    atomic.Int64
	attempts atomic.Int64
}

func (f *failingDeletes) DeleteResponse(ctx context.Context, id string) error {
	f.attempts.Add(1)
	if f.fails.Add(-1) >= 0 {
		return errors.New("store down")
	}
	return f.heldResponses.DeleteResponse(ctx, id)
}

// TestRespIndexCloseMakesOwedDeletes: a response forgotten while it was
// written, whose delete then fails, is deleted by close, which tries again
// until its context is done and logs the deletes it could not make.
func TestRespIndexCloseMakesOwedDeletes(t *testing.T) {
	f := func(fails int64, wait time.Duration, wantLeft bool) {
		t.Helper()
		st := &failingDeletes{heldResponses: heldResponses{flakyResponses: flakyResponses{written: map[string]store.Response{}},
			writing: make(chan struct{}, 1), release: make(chan struct{})}}
		st.fails.Store(fails)
		var logs testutil.Buffer
		ix := newRespIndex(st, time.Hour, slog.New(slog.NewJSONHandler(&logs, nil)))
		ix.remember(&store.Response{ID: "resp_1", Status: "completed"})
		<-st.writing
		if err := ix.forget(context.Background(), "resp_1"); err != nil {
			t.Fatal(err)
		}
		close(st.release)
		for st.attempts.Load() == 0 { // the writer's own try, which fails
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		start := time.Now()
		ix.close(ctx)
		if took := time.Since(start); took > wait+time.Second {
			t.Errorf("close took %v, over its context's %v", took, wait)
		}
		if st.has("resp_1") != wantLeft {
			t.Errorf("%d failing deletes: resp_1 in the store %t after close (%d tries)", fails, st.has("resp_1"), st.attempts.Load())
		}
		if logged := strings.Contains(logs.String(), `"ids":["resp_1"]`); logged != wantLeft {
			t.Errorf("%d failing deletes: the delete left logged %t: %s", fails, logged, logs.String())
		}
	}
	f(3, 5*time.Second, false)
	f(1<<40, 300*time.Millisecond, true)
}
