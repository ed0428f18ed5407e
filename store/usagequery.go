package store

// Reading the usage log. The rows are read through the view usage_log,
// which joins each row of usage_rows to its label. usage_rows has no index
// but its ids, so a filter by time or by key is first turned into a range
// of ids from usage_minutes (usageRange), and the database scans only
// that range, newest first.

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const usageCols = `time_ns, key_id, key_name, model, channel, status, input_tokens, output_tokens,
	cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id, client_style`

func scanUsage(row rowScanner) (Usage, error) {
	var u Usage
	var t, latency, firstToken int64
	err := row.Scan(&u.ID, &t, &u.KeyID, &u.KeyName, &u.Model, &u.Channel, &u.Status, &u.Input, &u.Output,
		&u.Cached, &u.Reasoning, &latency, &firstToken, &u.RequestID, &u.ClientStyle)
	u.Time, u.Latency, u.FirstToken = fromNS(t), time.Duration(latency), time.Duration(firstToken)
	return u, err
}

// Usage pages through the rows newest first (by ID, which follows time
// closely enough and is unique, so paging with BeforeID never skips a row).
func (s *sqlStore) Usage(ctx context.Context, f UsageFilter) ([]Usage, error) {
	w, ok, err := s.usageWhere(ctx, f, &where{})
	if err != nil || !ok {
		return nil, s.wrap("usage", err)
	}
	if f.BeforeID > 0 {
		w.add("id < $%d", f.BeforeID)
	}
	q := `SELECT id, ` + usageCols + ` FROM usage_log` + w.sql() + ` ORDER BY id DESC LIMIT ` + strconv.Itoa(usageLimit(f.Limit))
	rows, err := s.r.QueryContext(ctx, q, w.args...)
	if err != nil {
		return nil, s.wrap("usage", err)
	}
	list, err := collect(rows, scanUsage)
	return list, s.wrap("usage", err)
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
// usage_log, and the range of ids they narrow the scan to. ok is false
// when no row can match.
func (s *sqlStore) usageWhere(ctx context.Context, f UsageFilter, w *where) (_ *where, ok bool, err error) {
	lo, hi, ok, err := s.usageRange(ctx, f)
	if err != nil || !ok {
		return w, false, err
	}
	if lo > 0 {
		w.add("id >= $%d", lo)
		w.add("id <= $%d", hi)
	}
	return w.usage(f), true, nil
}

// usageRange is the range of ids holding every row in the filter's time
// range and of its keys, read from usage_minutes: 0, 0 when the filter
// has neither (every id), and ok false when no row is in it.
func (s *sqlStore) usageRange(ctx context.Context, f UsageFilter) (lo, hi int64, ok bool, err error) {
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
		return 0, 0, true, nil
	}
	var first, last sql.NullInt64
	err = s.r.QueryRowContext(ctx, `SELECT MIN(first_id), MAX(last_id) FROM usage_minutes`+m.sql(), m.args...).Scan(&first, &last)
	return first.Int64, last.Int64, first.Valid, err
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
