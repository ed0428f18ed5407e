package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// rowColumns are id and rowCols, for COPY.
var rowColumns = []string{"id", "time_ns", "label_id", "input_tokens", "output_tokens", "cached_tokens",
	"reasoning_tokens", "latency_ns", "first_token_ns", "request_id"}

// copyUsagePostgres sends rows on the pgx connection dc with one COPY, in
// binary, with no parameters for the server to parse and bind, and returns
// the first one's id. The ids are the largest in the table plus one
// onward, taken under an advisory lock held to the commit, so that every
// node's batches take theirs one after the other.
func copyUsagePostgres(ctx context.Context, _ *sqlStore, dc any, rows []Usage, labels []int64) (int64, error) {
	conn := dc.(*stdlib.Conn).Conn()
	// Any constant works as long as it is the same in every process; this
	// one is "rosetta" in ASCII plus one: the migrations' lock is "rosetta".
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_xact_lock(32210688759067746)`); err != nil {
		return 0, err
	}
	var first int64
	if err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM usage_rows`).Scan(&first); err != nil {
		return 0, err
	}
	src := &usageSource{rows: rows, labels: labels, first: first, i: -1}
	_, err := conn.CopyFrom(ctx, pgx.Identifier{"usage_rows"}, rowColumns, src)
	return first, err
}

// addSumsPostgres adds the sums m of a batch on the pgx connection dc,
// all statements sent at once.
func addSumsPostgres(ctx context.Context, _ *sqlStore, dc any, m map[minuteKey]minuteSums) error {
	b := &pgx.Batch{}
	err := eachSum(m, func(stmt int, args ...any) error {
		b.Queue(sumSQL[stmt], args...)
		return nil
	})
	if err != nil {
		return err
	}
	return dc.(*stdlib.Conn).Conn().SendBatch(ctx, b).Close()
}

// usageSource hands rows to CopyFrom, one reused list of values at a time.
type usageSource struct {
	rows   []Usage
	labels []int64
	first  int64
	i      int
	vals   [10]any
}

func (s *usageSource) Next() bool { s.i++; return s.i < len(s.rows) }

func (s *usageSource) Values() ([]any, error) {
	u := &s.rows[s.i]
	s.vals = [...]any{s.first + int64(s.i), toNS(u.Time), s.labels[s.i], u.Input, u.Output, u.Cached, u.Reasoning,
		int64(u.Latency), int64(u.FirstToken), u.RequestID}
	return s.vals[:], nil
}

func (s *usageSource) Err() error { return nil }
