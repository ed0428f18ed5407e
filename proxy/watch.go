package proxy

import (
	"context"
	"errors"
	"time"
)

// keyChangesPerPoll bounds the key changes read in one poll; a burst
// larger than that is read over the next polls.
const keyChangesPerPoll = 1000

// watchStore picks up what other nodes change in the store, until stop is
// closed: every keyEvery the key changes after the change numbered seen
// (the changed keys leave the key cache, so a key revoked anywhere is
// refused here within a poll), and every channelEvery the channel list
// (routing is rebuilt when it differs from the one loaded).
func (g *Gateway) watchStore(seen int64, keyEvery, channelEvery time.Duration, stop <-chan struct{}) {
	keys := time.NewTicker(keyEvery)
	defer keys.Stop()
	channels := time.NewTicker(channelEvery)
	defer channels.Stop()
	for {
		select {
		case <-stop:
			return
		case <-keys.C:
			seen = g.pollKeys(seen, keyEvery)
		case <-channels.C:
			g.pollChannels(channelEvery)
		}
	}
}

// pollKeys drops the keys changed after the change numbered seen from the
// cache and returns the number of the last one. seen < 0 (the journal
// could not be read at start) only learns where it stands.
func (g *Gateway) pollKeys(seen int64, timeout time.Duration) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hashes, last, err := g.store.KeyChanges(ctx, seen, keyChangesPerPoll)
	if err != nil {
		g.log.Warn("cannot poll the store's key changes", "err", err)
		return seen
	}
	for _, h := range hashes {
		g.keys.invalidate(h)
	}
	return last
}

// pollChannels reloads the store's channels when the list differs from
// the one last loaded.
func (g *Gateway) pollChannels(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	list, err := g.store.Channels(ctx)
	cancel()
	if err != nil {
		g.log.Warn("cannot poll the store's channels", "err", err)
		return
	}
	g.rebuild.Lock()
	changed := channelsVersion(list) != g.channelsSeen
	g.rebuild.Unlock()
	if !changed {
		return
	}
	ctx, cancel = context.WithTimeout(context.Background(), timeout)
	skipped, err := g.loadChannels(ctx)
	cancel()
	if err = errors.Join(err, joinSkipped(skipped)); err != nil {
		g.log.Warn("store channels changed elsewhere; some left out", "err", err)
	} else {
		g.log.Info("store channels changed elsewhere; routing reloaded")
	}
}
