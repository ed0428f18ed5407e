package store

// Writing the usage log. Its rows cost the gateway CPU at every request, so
// they are made cheap to write (README.md, "Usage rows cost little CPU"):
//
//   - usage_rows has no index but its primary key, and its ids are handed
//     out in the order rows are written: MAX(id) + 1 onward, under the
//     writer's lock (SQLite's own write lock; in PostgreSQL an advisory
//     lock held to the commit).
//   - What a request was (key, model, channel, status, client style) is
//     one integer, the id of its label in usage_labels, kept in memory:
//     a row binds nine values, one of them a string, not fourteen and five.
//   - Each batch adds its rows' id ranges and totals per key and minute to
//     usage_minutes, a statement per batch, not per row. The queries by
//     time and by key find their rows through it (usagequery.go).

import (
	"context"
	"database/sql/driver"
	"math/bits"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// rowCols are the columns of usage_rows a batch writes: all but id, which
// SQLite gives and PostgreSQL's COPY sends first.
const rowCols = `time_ns, label_id, input_tokens, output_tokens, cached_tokens, reasoning_tokens,
	latency_ns, first_token_ns, request_id`

const rowColCount = 9

// maxInsertRows is the most rows one of SQLite's usage INSERTs carries (9
// parameters each: well under SQLite's 32766). A batch is cut into INSERTs
// of power-of-two sizes, so nine statements, prepared once per connection,
// serve every batch.
const (
	maxInsertRows = 1 << maxInsertLog
	maxInsertLog  = 8
)

// insertUsageStatements returns the INSERTs of 1, 2, 4 … maxInsertRows
// rows, each beginning with insert (such as "INSERT OR FAIL INTO").
func insertUsageStatements(insert string) (list [maxInsertLog + 1]string) {
	row := "(" + strings.Repeat("?,", rowColCount-1) + "?)"
	for i := range list {
		list[i] = insert + " usage_rows (" + rowCols + ") VALUES " + strings.Repeat(row+",", 1<<i-1) + row
	}
	return list
}

// AddUsage inserts the rows in one transaction. It does not set their IDs.
// The rows' labels are looked up first (and made when new, each in a
// transaction of its own); then the rows and their minutes are written on
// the driver's own connection (sql.Conn.Raw): SQLite through INSERTs
// prepared once per connection, PostgreSQL through COPY.
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

// addUsage writes rows, labelled labels, their minutes and their keys'
// last-used times in the transaction open on dc.
func (s *sqlStore) addUsage(ctx context.Context, dc any, rows []Usage, labels []int64) error {
	first, err := s.d.insertUsage(ctx, s, dc, rows, labels)
	if err != nil {
		return err
	}
	return s.d.addSums(ctx, s, dc, usageMinutes(rows, first))
}

// sqliteInserts are the usage INSERTs prepared on one SQLite connection,
// and the arguments of the largest, reused by every batch.
// modernc.org/sqlite keeps no cache of statements: an INSERT of 256 rows
// given as text is parsed again at every Exec, and database/sql would
// convert each of its 2,304 arguments and allocate their list again.
type sqliteInserts struct {
	conn  any // the driver connection they were prepared on
	stmts [maxInsertLog + 1]driver.StmtExecContext
	args  []driver.NamedValue
	sums  [len(sumSQL)]driver.StmtExecContext
}

// insertUsageSQLite inserts rows on the SQLite connection dc, in INSERTs
// of power-of-two sizes, and returns the first one's id. A row inserted
// without an id gets the largest in the table plus one, so the batch's ids
// follow each other, up to the last INSERT's last one.
func insertUsageSQLite(ctx context.Context, s *sqlStore, dc any, rows []Usage, labels []int64) (int64, error) {
	s.insertsMu.Lock()
	defer s.insertsMu.Unlock()
	ins, err := s.sqliteInserts(ctx, dc)
	if err != nil {
		return 0, err
	}
	var last int64
	total := len(rows)
	for len(rows) > 0 {
		n := 1 << (bits.Len(uint(min(len(rows), maxInsertRows))) - 1) // largest power of two that fits
		args := ins.args[:n*rowColCount]
		for i := range rows[:n] {
			setUsageArgs(args[i*rowColCount:], &rows[i], labels[i])
		}
		res, err := ins.stmts[bits.Len(uint(n))-1].ExecContext(ctx, args)
		for i := range args {
			args[i].Value = nil // drop the strings
		}
		if err == nil {
			last, err = res.LastInsertId()
		}
		if err != nil {
			return 0, err
		}
		rows, labels = rows[n:], labels[n:]
	}
	return last - int64(total) + 1, nil
}

// sqliteInserts returns the INSERTs prepared on dc, preparing them when dc
// is not the connection they were prepared on. Called with insertsMu held.
func (s *sqlStore) sqliteInserts(ctx context.Context, dc any) (*sqliteInserts, error) {
	if s.inserts != nil && s.inserts.conn == dc {
		return s.inserts, nil
	}
	// The statements of a connection database/sql closed went with it.
	s.inserts = nil
	ins := &sqliteInserts{conn: dc, args: make([]driver.NamedValue, maxInsertRows*rowColCount)}
	for i := range ins.args {
		ins.args[i].Ordinal = i + 1
	}
	var err error
	for i, q := range s.d.insertRows {
		if ins.stmts[i], err = prepare(ctx, dc, q); err != nil {
			ins.close()
			return nil, err
		}
	}
	for i, q := range sumSQL {
		if ins.sums[i], err = prepare(ctx, dc, q); err != nil {
			ins.close()
			return nil, err
		}
	}
	s.inserts = ins
	return ins, nil
}

func prepare(ctx context.Context, dc any, query string) (driver.StmtExecContext, error) {
	st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext), nil
}

func (ins *sqliteInserts) close() {
	for _, st := range append(ins.stmts[:], ins.sums[:]...) {
		if st != nil {
			st.(driver.Stmt).Close()
		}
	}
}

// addSumsSQLite adds the sums m of a batch on the SQLite connection dc,
// with statements prepared once.
func addSumsSQLite(ctx context.Context, s *sqlStore, dc any, m map[minuteKey]minuteSums) error {
	s.insertsMu.Lock()
	defer s.insertsMu.Unlock()
	ins, err := s.sqliteInserts(ctx, dc)
	if err != nil {
		return err
	}
	var named [7]driver.NamedValue
	return eachSum(m, func(stmt int, args ...any) error {
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		_, err := ins.sums[stmt].ExecContext(ctx, named[:len(args)])
		return err
	})
}

func setUsageArgs(args []driver.NamedValue, u *Usage, label int64) {
	_ = args[rowColCount-1]
	args[0].Value = toNS(u.Time)
	args[1].Value = label
	args[2].Value = u.Input
	args[3].Value = u.Output
	args[4].Value = u.Cached
	args[5].Value = u.Reasoning
	args[6].Value = int64(u.Latency)
	args[7].Value = int64(u.FirstToken)
	args[8].Value = u.RequestID
}

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
	vals   [rowColCount + 1]any
}

func (s *usageSource) Next() bool { s.i++; return s.i < len(s.rows) }

func (s *usageSource) Values() ([]any, error) {
	u := &s.rows[s.i]
	s.vals = [...]any{s.first + int64(s.i), toNS(u.Time), s.labels[s.i], u.Input, u.Output, u.Cached, u.Reasoning,
		int64(u.Latency), int64(u.FirstToken), u.RequestID}
	return s.vals[:], nil
}

func (s *usageSource) Err() error { return nil }
