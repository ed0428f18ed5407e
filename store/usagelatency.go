package store

// Latency per endpoint over a whole range: the console's breakdown by
// endpoint shows each endpoint's median and p95. Percentiles of buckets
// cannot be merged into the range's own (a mean of medians is no median),
// so the range's rows are ranked again, here in Go as UsageBuckets does:
// the filtered rows' endpoint and latency are read once, unordered, and
// each endpoint's latencies sorted. The result is exact; the cost grows
// with the rows, so the caller caps them: past max rows none is ranked and
// ErrTooManyRows says so, rather than a figure of some of them.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ErrTooManyRows is UsageLatency's answer for a filter with more rows than
// it may rank.
var ErrTooManyRows = errors.New("store: too many usage rows to rank")

// EndpointLatency is the latency of one endpoint's requests.
type EndpointLatency struct {
	Endpoint string // "" for rows written before the endpoint was kept
	Requests int64
	P50, P95 time.Duration // nearest-rank
}

// UsageLatency ranks the latencies of the filtered rows per endpoint, the
// busiest endpoint first. Limit and BeforeID do not apply. With more than
// max rows it reads max+1 of them and returns ErrTooManyRows.
func (s *sqlStore) UsageLatency(ctx context.Context, f UsageFilter, max int) ([]EndpointLatency, error) {
	if max <= 0 {
		return nil, fmt.Errorf("store: usage latency: max %d must be positive", max)
	}
	f.BeforeID = 0
	w, ok, err := s.usageWhere(ctx, f, &where{})
	if err != nil || !ok {
		return nil, s.wrap("usage latency", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT endpoint, latency_ns FROM usage_log`+w.sql()+
		` LIMIT `+strconv.Itoa(max+1), w.args...)
	if err != nil {
		return nil, s.wrap("usage latency", err)
	}
	defer rows.Close()
	var groups []latencyGroup // a few endpoints, many rows: a list beats a map keyed by a new string a row
	var endpoint sql.RawBytes
	var latency int64
	n := 0
	for rows.Next() {
		if err := rows.Scan(&endpoint, &latency); err != nil {
			return nil, s.wrap("usage latency", err)
		}
		if n++; n > max {
			return nil, ErrTooManyRows
		}
		i := slices.IndexFunc(groups, func(g latencyGroup) bool { return g.endpoint == string(endpoint) })
		if i < 0 {
			i, groups = len(groups), append(groups, latencyGroup{endpoint: string(endpoint)})
		}
		groups[i].lat = append(groups[i].lat, latency)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("usage latency", err)
	}
	return rankLatencies(groups), nil
}

type latencyGroup struct {
	endpoint string
	lat      []int64
}

// rankLatencies sorts each endpoint's latencies and reads off its
// percentiles, the busiest endpoint first (then by name).
func rankLatencies(groups []latencyGroup) []EndpointLatency {
	out := make([]EndpointLatency, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g.lat)
		out = append(out, EndpointLatency{Endpoint: g.endpoint, Requests: int64(len(g.lat)),
			P50: time.Duration(g.lat[rank(50, len(g.lat))]), P95: time.Duration(g.lat[rank(95, len(g.lat))])})
	}
	slices.SortFunc(out, func(a, b EndpointLatency) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	return out
}
