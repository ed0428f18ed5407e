package store

// The upstream attempts of a request that had a failed one ride in its
// usage row (Usage.Attempts) and are written in the row's batch, a row of
// usage_attempts per attempt by the usage row's id: a batch with no such
// request, the usual one, adds nothing, not even a statement.
//
// They are keyed by the usage row's id, not by the request id: the id is
// handed out in the same transaction, it is what retention deletes by
// (usage_units likewise), and a request id need not be unique (the gateway
// keeps a client's own X-Request-Id when it is a sane token).

import (
	"context"
	"database/sql/driver"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// attemptsPerStatement bounds the attempts one INSERT carries, two
// parameters each. modernc.org/sqlite binds a $N parameter by looking its
// name up in a list, so a statement's binding grows with the square of its
// parameters: 500 attempts a statement cost ~8 µs of CPU an attempt, 32
// about 3 (BenchmarkAddUsageAttempts).
const attemptsPerStatement = 32

// addAttempts writes the attempts of the rows that have any, whose ids are
// first onward. Numbers are written as literals; the channel and the error
// text are parameters.
func addAttempts(ctx context.Context, dc any, rows []Usage, first int64) error {
	var q []byte
	var args []driver.NamedValue
	for i := range rows {
		for seq, a := range rows[i].Attempts {
			if len(args) == 2*attemptsPerStatement {
				if err := execAttempts(ctx, dc, q, args); err != nil {
					return err
				}
				q, args = q[:0], args[:0]
			}
			if len(q) == 0 {
				q = append(q, "INSERT INTO usage_attempts (id, seq, channel, status, error, duration_ns) VALUES "...)
			} else {
				q = append(q, ',')
			}
			q = append(strconv.AppendInt(append(q, '('), first+int64(i), 10), ',')
			q = append(strconv.AppendInt(q, int64(seq), 10), ",$"...)
			q = append(strconv.AppendInt(q, int64(len(args)+1), 10), ',')
			q = append(strconv.AppendInt(q, int64(a.Status), 10), ",$"...)
			q = append(strconv.AppendInt(q, int64(len(args)+2), 10), ',')
			q = append(strconv.AppendInt(q, int64(a.Duration), 10), ')')
			args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: storableText(a.Channel, MaxAttemptError)},
				driver.NamedValue{Ordinal: len(args) + 2, Value: storableText(a.Error, MaxAttemptError)})
		}
	}
	if len(args) == 0 {
		return nil
	}
	return execAttempts(ctx, dc, q, args)
}

func execAttempts(ctx context.Context, dc any, q []byte, args []driver.NamedValue) error {
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, string(q), args)
	return err
}

// storableText is s as both databases take it, at most max bytes: an
// upstream's message may hold invalid UTF-8 or NULs, which PostgreSQL's
// TEXT refuses, and would make the whole batch fail.
func storableText(s string, max int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// readAttempts sets the Attempts of the rows in list that have any, in one
// query by their ids (written as integer literals, as key ids are).
func (s *sqlStore) readAttempts(ctx context.Context, list []Usage) error {
	if len(list) == 0 {
		return nil
	}
	at := make(map[int64]*Usage, len(list))
	ids := make([]int64, len(list))
	for i := range list {
		ids[i] = list[i].ID
		at[list[i].ID] = &list[i]
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, channel, status, error, duration_ns FROM usage_attempts
		WHERE id IN (`+intList(ids)+`) ORDER BY id, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, duration int64
		var a Attempt
		if err := rows.Scan(&id, &a.Channel, &a.Status, &a.Error, &duration); err != nil {
			return err
		}
		a.Duration = time.Duration(duration)
		if u := at[id]; u != nil {
			u.Attempts = append(u.Attempts, a)
		}
	}
	return rows.Err()
}
