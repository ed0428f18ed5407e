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
// takes them off usage_minutes.
func deleteUsageBatch(ctx context.Context, tx *sql.Tx, t int64) (int64, error) {
	var lo, hi sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT MIN(first_id), MAX(last_id) FROM usage_minutes WHERE minute <= $1`,
		minuteOf(t)).Scan(&lo, &hi)
	if err != nil || !lo.Valid {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM usage_rows WHERE id IN (SELECT id FROM usage_rows
		WHERE id >= $1 AND id <= $2 AND time_ns < $3 ORDER BY id LIMIT `+strconv.Itoa(pruneBatch)+`)
		RETURNING (SELECT key_id FROM usage_labels WHERE usage_labels.id = usage_rows.label_id), time_ns,
		input_tokens, output_tokens`, lo.Int64, hi.Int64, t)
	if err != nil {
		return 0, err
	}
	gone, n, err := sumDeleted(rows)
	if err != nil {
		return 0, err
	}
	return n, subtractMinutes(ctx, tx, gone, minuteOf(t))
}

// sumDeleted sums the deleted rows by key and minute.
func sumDeleted(rows *sql.Rows) (map[minuteKey]minuteSums, int64, error) {
	defer rows.Close()
	gone := make(map[minuteKey]minuteSums)
	var n int64
	for rows.Next() {
		var u Usage
		var ns int64
		if err := rows.Scan(&u.KeyID, &ns, &u.Input, &u.Output); err != nil {
			return nil, 0, err
		}
		k := minuteKey{u.KeyID, minuteOf(ns)}
		sums := gone[k]
		sums.add(0, &u)
		gone[k] = sums
		n++
	}
	return gone, n, rows.Err()
}

// subtractMinutes takes the sums of deleted rows off usage_minutes and
// deletes the entries left with no request, all in minutes up to last.
func subtractMinutes(ctx context.Context, tx *sql.Tx, gone map[minuteKey]minuteSums, last int64) error {
	if len(gone) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `UPDATE usage_minutes SET requests = requests - $1,
		input_tokens = input_tokens - $2, output_tokens = output_tokens - $3 WHERE key_id = $4 AND minute = $5`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, k := range sortedMinutes(gone) { // in the order AddUsage locks them
		v := gone[k]
		if _, err := st.ExecContext(ctx, v.requests, v.input, v.output, k.keyID, k.minute); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM usage_minutes WHERE minute <= $1 AND requests = 0`, last)
	return err
}
