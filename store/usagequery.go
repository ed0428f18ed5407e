package store

// Reading the usage log. The rows are read through the view usage_log,
// which joins each row of usage_rows to its label. usage_rows has no index
// but its ids, so a filter by time or by keys is first turned into ranges
// of ids from usage_minutes (usageRanges), and the database scans only
// those: Usage walks them newest first until it has its rows, the others
// read the one range that spans them.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

const usageCols = `time_ns, key_id, key_name, model, channel, status, input_tokens, output_tokens,
	cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id, client_style, endpoint, units, unit`

func scanUsage(row rowScanner) (Usage, error) {
	var u Usage
	var t, latency, firstToken int64
	err := row.Scan(&u.ID, &t, &u.KeyID, &u.KeyName, &u.Model, &u.Channel, &u.Status, &u.Input, &u.Output,
		&u.Cached, &u.Reasoning, &latency, &firstToken, &u.RequestID, &u.ClientStyle,
		&u.Endpoint, &u.Units, &u.Unit)
	u.Time, u.Latency, u.FirstToken = fromNS(t), time.Duration(latency), time.Duration(firstToken)
	return u, err
}

// Usage pages through the rows newest first (by ID, which follows time
// closely enough and is unique, so paging with BeforeID never skips a row).
// It reads the filter's ranges of ids one by one, newest first, with one
// prepared query, until it has its rows: the rows of a key seldom used are
// found without reading those between them. The rows come with their
// attempts.
func (s *sqlStore) Usage(ctx context.Context, f UsageFilter) ([]Usage, error) {
	ranges, err := s.usageRanges(ctx, f)
	if err != nil || len(ranges) == 0 {
		return nil, s.wrap("usage", err)
	}
	// The range's ends and the rows still wanted follow the filter's
	// arguments.
	w := (&where{}).usage(f)
	n := len(w.args)
	w.conds = append(w.conds, fmt.Sprintf("id >= $%d AND id <= $%d", n+1, n+2))
	st, err := s.r.PrepareContext(ctx, `SELECT id, `+usageCols+` FROM usage_log`+w.sql()+
		fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, n+3))
	if err != nil {
		return nil, s.wrap("usage", err)
	}
	defer st.Close()
	var list []Usage
	limit := usageLimit(f.Limit)
	for _, r := range ranges {
		rows, err := st.QueryContext(ctx, append(w.args[:n:n], r.lo, r.hi, limit-len(list))...)
		if err != nil {
			return nil, s.wrap("usage", err)
		}
		more, err := collect(rows, scanUsage)
		if err != nil {
			return nil, s.wrap("usage", err)
		}
		if list = append(list, more...); len(list) == limit {
			break
		}
	}
	if err := s.readAttempts(ctx, list); err != nil {
		return nil, s.wrap("usage attempts", err)
	}
	return list, nil
}

// usageLimit is the number of rows a filter's Limit asks for.
func usageLimit(n int) int {
	if n <= 0 {
		return 100
	}
	return min(n, 10000)
}

// where gathers the conditions of a query and their arguments.
type where struct {
	conds []string
	args  []any
}

// add appends a condition whose one placeholder is written $%d.
func (w *where) add(cond string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, fmt.Sprintf(cond, len(w.args)))
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// usageWhere adds to w the filter's selecting fields as conditions on
// usage_log, and the one range of ids that spans the filter's ranges. ok
// is false when no row can match.
func (s *sqlStore) usageWhere(ctx context.Context, f UsageFilter, w *where) (_ *where, ok bool, err error) {
	ranges, err := s.usageRanges(ctx, f)
	if err != nil || len(ranges) == 0 {
		return w, false, err
	}
	w.add("id >= $%d", ranges[len(ranges)-1].lo)
	w.add("id <= $%d", ranges[0].hi)
	return w.usage(f), true, nil
}

// idRange is the ids lo to hi, both included.
type idRange struct{ lo, hi int64 }

// Ranges of ids closer than mergeGap are read as one: reading the rows
// between them costs less than another query.
const mergeGap = 256

// usageRanges are the ranges of ids that hold every row of the filter's
// keys in its time range, and below BeforeID, newest first and apart,
// read from usage_minutes; every id below BeforeID when the filter selects
// neither keys nor times.
func (s *sqlStore) usageRanges(ctx context.Context, f UsageFilter) ([]idRange, error) {
	below := int64(math.MaxInt64)
	if f.BeforeID > 0 {
		below = f.BeforeID - 1
	}
	m := &where{}
	if !f.From.IsZero() {
		m.add("minute >= $%d", minuteOf(toNS(f.From)))
	}
	if !f.To.IsZero() {
		m.add("minute <= $%d", minuteOf(toNS(f.To)))
	}
	if len(f.KeyIDs) > 0 {
		m.conds = append(m.conds, "key_id IN ("+intList(f.KeyIDs)+")")
	}
	if len(m.conds) == 0 {
		return []idRange{{0, below}}, nil
	}
	m.add("first_id <= $%d", below)
	rows, err := s.r.QueryContext(ctx, `SELECT first_id, last_id FROM usage_minutes`+m.sql()+` ORDER BY first_id`, m.args...)
	if err != nil {
		return nil, err
	}
	list, err := collect(rows, func(row rowScanner) (r idRange, err error) { return r, row.Scan(&r.lo, &r.hi) })
	return mergeRanges(list, below), err
}

// mergeRanges merges ranges sorted by lo that overlap or are closer than
// mergeGap, cuts them at below, and returns them newest first.
func mergeRanges(list []idRange, below int64) []idRange {
	var out []idRange
	for _, r := range list {
		r.hi = min(r.hi, below)
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+mergeGap {
			out[n-1].hi = max(out[n-1].hi, r.hi)
		} else {
			out = append(out, r)
		}
	}
	slices.Reverse(out)
	return out
}

// usage adds the filter's selecting fields as conditions. Key IDs are
// written into the SQL as integer literals rather than parameters: a user
// may own many keys, and a literal list needs no parameter limit and cannot
// inject anything.
func (w *where) usage(f UsageFilter) *where {
	if !f.From.IsZero() {
		w.add("time_ns >= $%d", toNS(f.From))
	}
	if !f.To.IsZero() {
		w.add("time_ns < $%d", toNS(f.To))
	}
	if len(f.KeyIDs) > 0 {
		w.conds = append(w.conds, "key_id IN ("+intList(f.KeyIDs)+")")
	}
	if f.Model != "" {
		w.add("model = $%d", f.Model)
	}
	if f.Channel != "" {
		w.add("channel = $%d", f.Channel)
	}
	if f.Status != 0 {
		w.add("status = $%d", f.Status)
	}
	if f.Endpoint != "" {
		w.add("endpoint = $%d", f.Endpoint)
	}
	return w
}

func intList(ids []int64) string {
	b := make([]byte, 0, len(ids)*4)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// Spend sums the usage of each key in keyIDs, every key with usage when
// keyIDs is empty. A key asked for that has no usage is in the map with
// zero totals. The totals come from usage_minutes, a row per key and
// minute, not from the rows themselves.
func (s *sqlStore) Spend(ctx context.Context, keyIDs []int64) (map[int64]Spend, error) {
	cond := ""
	if len(keyIDs) > 0 {
		cond = " WHERE key_id IN (" + intList(keyIDs) + ")"
	}
	// CAST: PostgreSQL's SUM of BIGINT is NUMERIC.
	rows, err := s.r.QueryContext(ctx, `SELECT key_id, CAST(SUM(requests) AS BIGINT), CAST(SUM(input_tokens) AS BIGINT),
		CAST(SUM(output_tokens) AS BIGINT) FROM usage_minutes`+cond+` GROUP BY key_id`)
	if err != nil {
		return nil, s.wrap("spend", err)
	}
	defer rows.Close()
	out := make(map[int64]Spend, len(keyIDs))
	for _, id := range keyIDs {
		out[id] = Spend{}
	}
	for rows.Next() {
		var id int64
		var sp Spend
		if err := rows.Scan(&id, &sp.Requests, &sp.Input, &sp.Output); err != nil {
			return nil, s.wrap("spend", err)
		}
		out[id] = sp
	}
	return out, s.wrap("spend", rows.Err())
}
