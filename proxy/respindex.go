package proxy

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

// respIndex remembers the Responses API's responses made through the
// gateway: which key made each, on which channel and upstream key, and,
// for the ones the gateway keeps, their items. It writes through memory to
// the store: remember puts a response in memory at once, where the next
// call on its id finds it (a client's GET right after its POST ends), and
// a writer persists it in the background, batching what arrives while it
// writes, so the request never waits on the store. A response leaves
// memory once written; until then a call on it from another node may not
// find it (a fraction of a second). Without a store, responses stay in
// memory until they are older than the retention (the newest 65,536 at
// most, as while the store fails).
type respIndex struct {
	st   store.Store // nil: memory only
	keep time.Duration
	log  *slog.Logger

	mu      sync.Mutex
	pending map[string]*pendingResp // not yet written, newest state
	// gone holds the responses forgotten while a write of theirs was under
	// way: the writer deletes them from the store once its write is done,
	// so that the write cannot bring them back, and until then they are
	// not found. A delete waits for no write.
	gone map[string]struct{}
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// pendingResp is a response not yet written, and how many times it
// changed: a write lets go of it only when it did not change meanwhile.
type pendingResp struct {
	store.Response
	changes int
	writing bool // in the write under way
}

// respRetry is how long the writer waits after the store failed.
const respRetry = time.Second

func newRespIndex(st store.Store, keep time.Duration, log *slog.Logger) *respIndex {
	ix := &respIndex{st: st, keep: keep, log: log, pending: map[string]*pendingResp{}, gone: map[string]struct{}{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go ix.run()
	return ix
}

// remember records r (copied) and has it written soon. A response already
// pending keeps its owner and place, and takes r's status and the items
// r sets, as the store does.
func (ix *respIndex) remember(r *store.Response) {
	ix.mu.Lock()
	if p := ix.pending[r.ID]; p != nil && p.KeyHash == r.KeyHash {
		p.Status, p.Incomplete, p.changes = r.Status, r.Incomplete, p.changes+1
		p.Input, p.Output, p.Usage = orBytes(r.Input, p.Input), orBytes(r.Output, p.Output), orBytes(r.Usage, p.Usage)
	} else if p == nil {
		ix.pending[r.ID] = &pendingResp{Response: *r}
	}
	ix.mu.Unlock()
	select {
	case ix.wake <- struct{}{}:
	default: // a write is due already
	}
}

// orBytes is a when it is set, else b.
func orBytes(a, b []byte) []byte {
	if a != nil {
		return a
	}
	return b
}

// maxMemoryResponses bounds what a gateway holds in memory without a
// store, or while its store fails: past it, the oldest responses are
// forgotten.
const maxMemoryResponses = 1 << 16

// find returns the response id, from memory or the store; nil when there
// is none.
func (ix *respIndex) find(ctx context.Context, id string) (*store.Response, error) {
	ix.mu.Lock()
	if p := ix.pending[id]; p != nil {
		c := p.Response
		ix.mu.Unlock()
		return &c, nil
	}
	_, gone := ix.gone[id]
	ix.mu.Unlock()
	if gone || ix.st == nil {
		return nil, nil
	}
	r, err := ix.st.Response(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

// forget deletes the response id, from memory and the store. A response
// in the write under way is deleted from the store by the writer, once
// its write is done: forget does not wait for it.
func (ix *respIndex) forget(ctx context.Context, id string) error {
	ix.mu.Lock()
	p := ix.pending[id]
	delete(ix.pending, id)
	writing := p != nil && p.writing
	if writing {
		ix.gone[id] = struct{}{}
	}
	ix.mu.Unlock()
	if ix.st == nil || writing {
		return nil
	}
	if err := ix.st.DeleteResponse(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// run writes what is pending whenever there is some, until close.
func (ix *respIndex) run() {
	defer close(ix.done)
	tick := time.NewTicker(respRetry)
	defer tick.Stop()
	for {
		select {
		case <-ix.stop:
			ix.flush()
			return
		case <-ix.wake:
		case <-tick.C:
		}
		ix.flush()
	}
}

// flush writes the pending responses in one transaction and lets go of
// those that did not change meanwhile; after a failure they stay, for the
// next try. Then it deletes those forgotten during the write. Without a
// store it drops those past the retention.
func (ix *respIndex) flush() {
	ix.mu.Lock()
	if len(ix.pending) == 0 {
		ix.mu.Unlock()
		ix.deleteGone(context.Background())
		return
	}
	batch := make([]store.Response, 0, len(ix.pending))
	changes := make([]int, 0, len(ix.pending))
	for _, p := range ix.pending {
		batch, changes = append(batch, p.Response), append(changes, p.changes)
		p.writing = ix.st != nil
	}
	ix.mu.Unlock()
	if ix.st == nil {
		ix.dropOld(time.Now().Add(-ix.keep), maxMemoryResponses)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := ix.st.PutResponses(ctx, batch)
	cancel()
	ix.mu.Lock()
	for i := range batch {
		p := ix.pending[batch[i].ID]
		switch {
		case p == nil:
		case err == nil && p.changes == changes[i]:
			delete(ix.pending, batch[i].ID)
		default:
			p.writing = false
		}
	}
	ix.mu.Unlock()
	if err != nil {
		ix.log.Error("cannot write responses; they stay in memory for the next try", "n", len(batch), "err", err)
		ix.dropOld(time.Time{}, maxMemoryResponses) // a store down for long costs no more memory than none
	}
	ix.deleteGone(context.Background())
}

// deleteGone deletes from the store the responses forgotten while they
// were written; those it cannot delete wait for the next flush (or close).
func (ix *respIndex) deleteGone(ctx context.Context) {
	ix.mu.Lock()
	if len(ix.gone) == 0 {
		ix.mu.Unlock()
		return
	}
	ids := slices.Collect(maps.Keys(ix.gone))
	ix.mu.Unlock()
	for _, id := range ids {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := ix.st.DeleteResponse(dctx, id)
		cancel()
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			ix.log.Error("cannot delete a forgotten response; retrying", "err", err)
			return
		}
		ix.mu.Lock()
		delete(ix.gone, id)
		ix.mu.Unlock()
	}
}

// dropOld lets go of the responses made before t, and of the oldest ones
// past the newest max.
func (ix *respIndex) dropOld(t time.Time, max int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for id, p := range ix.pending {
		if p.Created.Before(t) {
			delete(ix.pending, id)
		}
	}
	if len(ix.pending) <= max {
		return
	}
	byAge := make([]*pendingResp, 0, len(ix.pending))
	for _, p := range ix.pending {
		byAge = append(byAge, p)
	}
	slices.SortFunc(byAge, func(a, b *pendingResp) int { return a.Created.Compare(b.Created) })
	for _, p := range byAge[:len(byAge)-max] {
		delete(ix.pending, p.ID)
	}
}

// closeRetry is how long close waits between tries of the deletes owed.
const closeRetry = 100 * time.Millisecond

// close writes what is pending and stops the writer, then makes the
// deletes still owed, trying again until ctx is done: a response left in
// the store would be found again after a restart. Those it could not make
// are logged.
func (ix *respIndex) close(ctx context.Context) {
	select {
	case <-ix.stop:
	default:
		close(ix.stop)
	}
	<-ix.done
	if ix.st == nil {
		return
	}
	for ix.deleteGone(ctx); ix.goneCount() > 0; ix.deleteGone(ctx) {
		select {
		case <-ctx.Done():
			ix.mu.Lock()
			ids := slices.Sorted(maps.Keys(ix.gone))
			ix.mu.Unlock()
			ix.log.Error("responses deleted by their clients are left in the store", "ids", ids, "err", ctx.Err())
			return
		case <-time.After(closeRetry):
		}
	}
}

// goneCount is how many deletes are owed.
func (ix *respIndex) goneCount() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.gone)
}
