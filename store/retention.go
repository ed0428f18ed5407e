package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// PruneUsage deletes usage rows older than keep, once at start and then
// every interval, until ctx is done. Every node of a cluster may run it:
// deleting rows another node already deleted changes nothing. report hears
// of each pass that deleted rows or failed (err is nil on success).
func PruneUsage(ctx context.Context, s Store, keep, interval time.Duration, report func(deleted int64, err error)) {
	prune(ctx, s.DeleteUsageBefore, keep, interval, report)
}

// PruneResponses is PruneUsage for the Responses API's responses.
func PruneResponses(ctx context.Context, s Store, keep, interval time.Duration, report func(deleted int64, err error)) {
	prune(ctx, s.DeleteResponsesBefore, keep, interval, report)
}

func prune(ctx context.Context, deleteBefore func(context.Context, time.Time) (int64, error),
	keep, interval time.Duration, report func(deleted int64, err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := deleteBefore(ctx, time.Now().Add(-keep))
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

// pruneBatch is the most usage rows one DELETE takes: SQLite has a single
// writer, and a delete of months of rows in one transaction would make
// every usage batch behind it wait.
const pruneBatch = 5000

// DeleteUsageBefore deletes the rows older than t, pruneBatch rows per
// transaction, and takes them off usage_minutes in the same transaction.
func (s *sqlStore) DeleteUsageBefore(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
			n, err = deleteUsageBatch(ctx, tx, toNS(t))
			return err
		})
		total += n
		if err != nil {
			return total, s.wrap("delete usage", err)
		}
		if n < pruneBatch {
			return total, nil
		}
	}
}

// deleteUsageBatch deletes up to pruneBatch of the oldest rows older than
// t (in ns), within the ids usage_minutes gives the minutes up to t's, and
// takes them off usage_minutes. The rows stay in the database: the chunk
// is summed by key and minute there, then deleted by its range of ids.
func deleteUsageBatch(ctx context.Context, tx *sql.Tx, t int64) (int64, error) {
	var lo, hi sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT MIN(first_id), MAX(last_id) FROM usage_minutes WHERE minute <= $1`,
		minuteOf(t)).Scan(&lo, &hi)
	if err != nil || !lo.Valid {
		return 0, err
	}
	err = tx.QueryRowContext(ctx, `SELECT MAX(id) FROM (SELECT id FROM usage_rows WHERE id >= $1 AND id <= $2
		AND time_ns < $3 ORDER BY id LIMIT `+strconv.Itoa(pruneBatch)+`) AS chunk`, lo.Int64, hi.Int64, t).Scan(&hi)
	if err != nil || !hi.Valid {
		return 0, err
	}
	// CAST: PostgreSQL's SUM of BIGINT is NUMERIC.
	rows, err := tx.QueryContext(ctx, `SELECT key_id, time_ns / `+strconv.Itoa(minuteNS)+`, COUNT(*),
		CAST(SUM(input_tokens) AS BIGINT), CAST(SUM(output_tokens) AS BIGINT) FROM usage_log
		WHERE id >= $1 AND id <= $2 AND time_ns < $3 GROUP BY 1, 2`, lo.Int64, hi.Int64, t)
	if err != nil {
		return 0, err
	}
	gone, err := scanMinutes(rows)
	if err != nil {
		return 0, err
	}
	if err := subtractMinutes(ctx, tx, gone); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM usage_rows WHERE id >= $1 AND id <= $2 AND time_ns < $3`, lo.Int64, hi.Int64, t)
	if err != nil {
		return 0, err
	}
	// The units and attempts of the rows gone: those in the range without
	// a row left.
	for _, table := range []string{"usage_units", "usage_attempts"} {
		_, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id >= $1 AND id <= $2
			AND NOT EXISTS (SELECT 1 FROM usage_rows r WHERE r.id = `+table+`.id)`, lo.Int64, hi.Int64)
		if err != nil {
			return 0, err
		}
	}
	return res.RowsAffected()
}

// scanMinutes reads key, minute, requests and token sums.
func scanMinutes(rows *sql.Rows) (map[minuteKey]minuteSums, error) {
	defer rows.Close()
	m := make(map[minuteKey]minuteSums)
	for rows.Next() {
		var k minuteKey
		var v minuteSums
		if err := rows.Scan(&k.keyID, &k.minute, &v.requests, &v.input, &v.output); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// subtractMinutes takes the sums of deleted rows off usage_minutes and
// deletes the entries left with no request.
func subtractMinutes(ctx context.Context, tx *sql.Tx, gone map[minuteKey]minuteSums) error {
	if len(gone) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `UPDATE usage_minutes SET requests = requests - $1,
		input_tokens = input_tokens - $2, output_tokens = output_tokens - $3 WHERE key_id = $4 AND minute = $5`)
	if err != nil {
		return err
	}
	defer st.Close()
	keys := sortedMinutes(gone) // in the order AddUsage locks them
	first, last := keys[0].minute, keys[0].minute
	for _, k := range keys {
		v := gone[k]
		if _, err := st.ExecContext(ctx, v.requests, v.input, v.output, k.keyID, k.minute); err != nil {
			return err
		}
		first, last = min(first, k.minute), max(last, k.minute)
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM usage_minutes WHERE minute >= $1 AND minute <= $2 AND requests = 0`, first, last)
	return err
}
