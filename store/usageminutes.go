package store

import (
	"cmp"
	"slices"
)

// usage_minutes holds, per key and minute of the rows' time_ns, the range
// of the ids of those rows (first_id, last_id) and their totals (requests,
// input and output tokens). A batch adds to it once; the queries by time
// and by key read it to narrow their scan of usage_rows to ranges of ids,
// and Spend reads only it. Retention takes deleted rows off the totals
// and deletes a minute's entry with its last row; the id range is left as
// it was, wider than needed but still holding every row.

// minuteNS is the width of a minute of usage_minutes.
const minuteNS = 60_000_000_000

// minuteOf is the minute of a time_ns, divided as both databases divide
// integers (towards zero): the migration computes it in SQL.
func minuteOf(ns int64) int64 { return ns / minuteNS }

type minuteKey struct{ keyID, minute int64 }

// minuteSums are a key's rows in a minute: their ids and totals, and the
// latest time_ns among them (not kept in usage_minutes: it moves the key's
// last-used time).
type minuteSums struct{ first, last, requests, input, output, latest int64 }

func (m *minuteSums) add(id int64, u *Usage) {
	ns := toNS(u.Time)
	if m.requests == 0 {
		m.first, m.latest = id, ns
	}
	m.first, m.last, m.latest = min(m.first, id), max(m.last, id), max(m.latest, ns)
	m.requests++
	m.input += u.Input
	m.output += u.Output
}

// usageMinutes sums rows, whose ids are first onward, by key and minute.
func usageMinutes(rows []Usage, first int64) map[minuteKey]minuteSums {
	m := make(map[minuteKey]minuteSums)
	var k minuteKey
	var sums minuteSums
	for i := range rows {
		u := &rows[i]
		// Sums of the same key and minute as the row before (most rows)
		// are added up here, and go to the map once the key or minute
		// changes.
		if next := (minuteKey{u.KeyID, minuteOf(toNS(u.Time))}); i == 0 || next != k {
			if i > 0 {
				m[k] = sums
			}
			k, sums = next, m[next]
		}
		sums.add(first+int64(i), u)
	}
	if len(rows) > 0 {
		m[k] = sums
	}
	return m
}

// The statements that add a batch's sums, in the batch's transaction: an
// upsert of usage_minutes per key and minute, then an update of each key's
// last-used time, which only moves it forward.
const (
	addMinuteSQL = `INSERT INTO usage_minutes (key_id, minute, first_id, last_id, requests, input_tokens, output_tokens)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (key_id, minute) DO UPDATE SET
	first_id = CASE WHEN excluded.first_id < usage_minutes.first_id THEN excluded.first_id ELSE usage_minutes.first_id END,
	last_id = CASE WHEN excluded.last_id > usage_minutes.last_id THEN excluded.last_id ELSE usage_minutes.last_id END,
	requests = usage_minutes.requests + excluded.requests,
	input_tokens = usage_minutes.input_tokens + excluded.input_tokens,
	output_tokens = usage_minutes.output_tokens + excluded.output_tokens`
	touchKeySQL = `UPDATE api_keys SET last_used_ns = $1 WHERE id = $2 AND last_used_ns < $1`
)

// sumSQL lists them, for the index eachSum passes.
var sumSQL = [...]string{addMinuteSQL, touchKeySQL}

// eachSum calls fn with the index in sumSQL and the arguments of each
// statement that adds m, in order of key and minute: two transactions
// lock the rows they share in the same order.
func eachSum(m map[minuteKey]minuteSums, fn func(stmt int, args ...any) error) error {
	keys := sortedMinutes(m)
	for _, k := range keys {
		v := m[k]
		if err := fn(0, k.keyID, k.minute, v.first, v.last, v.requests, v.input, v.output); err != nil {
			return err
		}
	}
	var latest int64 // of the key's minutes so far
	for i, k := range keys {
		latest = max(latest, m[k].latest)
		if i+1 < len(keys) && keys[i+1].keyID == k.keyID {
			continue
		}
		if k.keyID != 0 { // keys of the configuration file are not in api_keys
			if err := fn(1, latest, k.keyID); err != nil {
				return err
			}
		}
		latest = 0
	}
	return nil
}

func sortedMinutes(m map[minuteKey]minuteSums) []minuteKey {
	keys := make([]minuteKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b minuteKey) int {
		return cmp.Or(cmp.Compare(a.keyID, b.keyID), cmp.Compare(a.minute, b.minute))
	})
	return keys
}
