package store

// Writing the usage log. Its rows cost the gateway CPU at every request, so
// they are made cheap to write (README.md, "Usage rows cost little CPU"):
//
//   - usage_rows has no index but its primary key, and its ids are handed
//     out in the order rows are written: MAX(id) + 1 onward, under the
//     writer's lock (SQLite's own write lock; in PostgreSQL an advisory
//     lock held to the commit).
//   - What a request was (key, model, channel, status, client style) is
//     one integer, the id of its label in usage_labels, kept in memory
//     (usagelabels.go): a row is nine values, one of them a string, not
//     fourteen and five.
//   - Each batch adds its rows' id ranges and totals per key and minute to
//     usage_minutes, and moves its keys' last-used times, a statement per
//     key and minute, not per row (usageminutes.go). The queries by time
//     and by key find their rows through usage_minutes (usagequery.go).
//   - Units other than tokens (seconds of audio, characters of speech, ...)
//     are few rows' (media requests'): they go to usage_units, a row per
//     usage row that has any, so that the others pay nothing for them.
//   - SQLite copies a batch from Go memory through a virtual table, with no
//     parameter to bind (usagesqlite.go); PostgreSQL gets it by binary COPY
//     (usagepostgres.go).

import (
	"context"
	"database/sql/driver"
	"strconv"
)

// rowCols are the columns of usage_rows a batch writes: all but id, which
// SQLite gives and PostgreSQL's COPY sends first.
const rowCols = `time_ns, label_id, input_tokens, output_tokens, cached_tokens, reasoning_tokens,
	latency_ns, first_token_ns, request_id`

// AddUsage inserts the rows in one transaction. It does not set their IDs.
// The rows' labels are looked up first (and made when new, each in a
// transaction of its own); then the rows and their sums are written on the
// driver's own connection (sql.Conn.Raw).
func (s *sqlStore) AddUsage(ctx context.Context, rows []Usage) error {
	if len(rows) == 0 {
		return nil
	}
	labels, err := s.labelIDs(ctx, rows)
	if err != nil {
		return s.wrap("add usage", err)
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return s.wrap("add usage", err)
	}
	defer conn.Close()
	return s.wrap("add usage", conn.Raw(func(dc any) error {
		tx, err := dc.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		if err := s.addUsage(ctx, dc, rows, labels); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}))
}

// addUsage writes rows, labelled labels, their units and attempts, their
// minutes and their keys' last-used times in the transaction open on dc.
func (s *sqlStore) addUsage(ctx context.Context, dc any, rows []Usage, labels []int64) error {
	first, err := s.d.insertUsage(ctx, s, dc, rows, labels)
	if err != nil {
		return err
	}
	if err := addUnits(ctx, dc, rows, first); err != nil {
		return err
	}
	if err := addAttempts(ctx, dc, rows, first); err != nil {
		return err
	}
	return s.d.addSums(ctx, s, dc, usageMinutes(rows, first))
}

// addUnits writes the units of the rows that have any, whose ids are first
// onward, into usage_units: one statement for the batch, none when no row
// has units (most batches: chat and embeddings have none). The values are
// integers written as literals, so the statement has no parameter to bind
// nor a limit on their number.
func addUnits(ctx context.Context, dc any, rows []Usage, first int64) error {
	var q []byte
	for i := range rows {
		if rows[i].Units == 0 {
			continue
		}
		if q == nil {
			q = append(q, "INSERT INTO usage_units (id, units) VALUES "...)
		} else {
			q = append(q, ',')
		}
		q = append(strconv.AppendInt(append(q, '('), first+int64(i), 10), ',')
		q = append(strconv.AppendInt(q, rows[i].Units, 10), ')')
	}
	if q == nil {
		return nil
	}
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, string(q), nil)
	return err
}
