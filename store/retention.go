package store

import (
	"context"
	"time"
)

// PruneUsage deletes usage rows older than keep, once at start and then
// every interval, until ctx is done. Every node of a cluster may run it:
// deleting rows another node already deleted changes nothing. report hears
// of each pass that deleted rows or failed (err is nil on success).
func PruneUsage(ctx context.Context, s Store, keep, interval time.Duration, report func(deleted int64, err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := s.DeleteUsageBefore(ctx, time.Now().Add(-keep))
		if ctx.Err() != nil {
			return
		}
		if n > 0 || err != nil {
			report(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
