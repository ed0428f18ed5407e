package store

// usage_minutes holds, per key and minute of the rows' time_ns, the range
// of the ids of those rows (first_id, last_id) and their totals (requests,
// input and output tokens). A batch adds to it once; the queries by time
// and by key read it to narrow their scan of usage_rows to a range of ids,
// and Spend reads only it. Retention takes deleted rows off the totals
// and deletes a minute's entry with its last row; the id range is left as
// it was, wider than needed but still holding every row.

// minuteNS is the width of a minute of usage_minutes.
const minuteNS = 60_000_000_000

// minuteOf is the minute of a time_ns, divided as both databases divide
// integers (towards zero): the migration computes it in SQL.
func minuteOf(ns int64) int64 { return ns / minuteNS }

type minuteKey struct{ keyID, minute int64 }

// minuteSums are a key's rows in a minute: their ids and totals.
type minuteSums struct{ first, last, requests, input, output int64 }

func (m *minuteSums) add(id int64, u *Usage) {
	if m.requests == 0 || id < m.first {
		m.first = id
	}
	m.last = max(m.last, id)
	m.requests++
	m.input += u.Input
	m.output += u.Output
}

// usageMinutes sums rows, whose ids are first onward, by key and minute.
func usageMinutes(rows []Usage, first int64) map[minuteKey]minuteSums {
	m := make(map[minuteKey]minuteSums)
	for i := range rows {
		u := &rows[i]
		k := minuteKey{u.KeyID, minuteOf(toNS(u.Time))}
		sums := m[k]
		sums.add(first+int64(i), u)
		m[k] = sums
	}
	return m
}

// addMinuteSQL adds a key's rows of a minute to usage_minutes.
const addMinuteSQL = `INSERT INTO usage_minutes (key_id, minute, first_id, last_id, requests, input_tokens, output_tokens)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (key_id, minute) DO UPDATE SET
	first_id = CASE WHEN excluded.first_id < usage_minutes.first_id THEN excluded.first_id ELSE usage_minutes.first_id END,
	last_id = CASE WHEN excluded.last_id > usage_minutes.last_id THEN excluded.last_id ELSE usage_minutes.last_id END,
	requests = usage_minutes.requests + excluded.requests,
	input_tokens = usage_minutes.input_tokens + excluded.input_tokens,
	output_tokens = usage_minutes.output_tokens + excluded.output_tokens`

// addMinuteArgs are the arguments of addMinuteSQL.
func addMinuteArgs(k minuteKey, v minuteSums) [7]any {
	return [...]any{k.keyID, k.minute, v.first, v.last, v.requests, v.input, v.output}
}
