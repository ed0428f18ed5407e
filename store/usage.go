package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

const usageCols = `time_ns, key_id, key_name, model, channel, status, input_tokens, output_tokens,
	cached_tokens, reasoning_tokens, latency_ns, first_token_ns, request_id, client_style`

const usageColCount = 14

// maxInsertRows is the most rows one of SQLite's usage INSERTs carries (14
// parameters each: well under SQLite's 32766). A batch is cut into INSERTs
// of power-of-two sizes, so nine statements, prepared once per connection,
// serve every batch.
const (
	maxInsertRows = 1 << maxInsertLog
	maxInsertLog  = 8
)

// insertUsageStatements returns the INSERTs of 1, 2, 4 … maxInsertRows
// rows, each beginning with insert (such as "INSERT OR FAIL INTO"), with
// placeholders written by placeholder.
func insertUsageStatements(insert string, placeholder func(n int) string) (list [maxInsertLog + 1]string) {
	for i := range list {
		list[i] = insertUsageStatement(insert, 1<<i, placeholder)
	}
	return list
}

func insertUsageStatement(insert string, rows int, placeholder func(n int) string) string {
	var b strings.Builder
	b.WriteString(insert + " usage_log (" + usageCols + ") VALUES ")
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range usageColCount {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(placeholder(r*usageColCount + c + 1))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// AddUsage inserts the rows in one transaction. It does not set their IDs:
// a multi-row INSERT's RETURNING order is not guaranteed by either database.
// It runs on the driver's own connection (sql.Conn.Raw): SQLite through
// INSERTs prepared once per connection, PostgreSQL through COPY.
func (s *sqlStore) AddUsage(ctx context.Context, rows []Usage) error {
	if len(rows) == 0 {
		return nil
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return s.wrap("add usage", err)
	}
	defer conn.Close()
	return s.wrap("add usage", conn.Raw(func(dc any) error { return s.d.addUsage(ctx, s, dc, rows) }))
}

// sqliteInserts are the usage INSERTs prepared on one SQLite connection,
// and the arguments of the largest, reused by every batch.
// modernc.org/sqlite keeps no cache of statements: an INSERT of 256 rows
// given as text is parsed again at every Exec, and database/sql would
// convert each of its 3,584 arguments and allocate their list again.
type sqliteInserts struct {
	conn  any // the driver connection they were prepared on
	stmts [maxInsertLog + 1]driver.StmtExecContext
	args  []driver.NamedValue
}

// addUsageSQLite writes rows on the SQLite connection dc in one
// transaction, in INSERTs of power-of-two sizes.
func addUsageSQLite(ctx context.Context, s *sqlStore, dc any, rows []Usage) error {
	s.insertsMu.Lock()
	defer s.insertsMu.Unlock()
	ins, err := s.sqliteInserts(ctx, dc)
	if err != nil {
		return err
	}
	tx, err := dc.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	for len(rows) > 0 {
		n := 1 << (bits.Len(uint(min(len(rows), maxInsertRows))) - 1) // largest power of two that fits
		args := ins.args[:n*usageColCount]
		for i := range rows[:n] {
			setUsageArgs(args[i*usageColCount:], &rows[i])
		}
		_, err := ins.stmts[bits.Len(uint(n))-1].ExecContext(ctx, args)
		for i := range args {
			args[i].Value = nil // drop the strings
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		rows = rows[n:]
	}
	return tx.Commit()
}

// sqliteInserts returns the INSERTs prepared on dc, preparing them when dc
// is not the connection they were prepared on. Called with insertsMu held.
func (s *sqlStore) sqliteInserts(ctx context.Context, dc any) (*sqliteInserts, error) {
	if s.inserts != nil && s.inserts.conn == dc {
		return s.inserts, nil
	}
	// The statements of a connection database/sql closed went with it.
	s.inserts = nil
	ins := &sqliteInserts{conn: dc, args: make([]driver.NamedValue, maxInsertRows*usageColCount)}
	for i := range ins.args {
		ins.args[i].Ordinal = i + 1
	}
	for i, q := range s.d.insertUsage {
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if err != nil {
			ins.close()
			return nil, err
		}
		ins.stmts[i] = st.(driver.StmtExecContext)
	}
	s.inserts = ins
	return ins, nil
}

func (ins *sqliteInserts) close() {
	for _, st := range ins.stmts {
		if st != nil {
			st.(driver.Stmt).Close()
		}
	}
}

func setUsageArgs(args []driver.NamedValue, u *Usage) {
	_ = args[usageColCount-1]
	args[0].Value = toNS(u.Time)
	args[1].Value = u.KeyID
	args[2].Value = u.KeyName
	args[3].Value = u.Model
	args[4].Value = u.Channel
	args[5].Value = int64(u.Status)
	args[6].Value = u.Input
	args[7].Value = u.Output
	args[8].Value = u.Cached
	args[9].Value = u.Reasoning
	args[10].Value = int64(u.Latency)
	args[11].Value = int64(u.FirstToken)
	args[12].Value = u.RequestID
	args[13].Value = u.ClientStyle
}

// usageColumns are usageCols for COPY.
var usageColumns = []string{"time_ns", "key_id", "key_name", "model", "channel", "status", "input_tokens",
	"output_tokens", "cached_tokens", "reasoning_tokens", "latency_ns", "first_token_ns", "request_id", "client_style"}

// addUsagePostgres writes rows on the pgx connection dc with one COPY,
// a statement of its own and so a transaction of its own. COPY sends the
// rows in binary, with no parameters for the server to parse and bind.
func addUsagePostgres(ctx context.Context, _ *sqlStore, dc any, rows []Usage) error {
	src := &usageSource{rows: rows, i: -1}
	_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"usage_log"}, usageColumns, src)
	return err
}

// usageSource hands rows to CopyFrom, one reused list of values at a time.
type usageSource struct {
	rows []Usage
	i    int
	vals [usageColCount]any
}

func (s *usageSource) Next() bool { s.i++; return s.i < len(s.rows) }

func (s *usageSource) Values() ([]any, error) {
	u := &s.rows[s.i]
	s.vals = [usageColCount]any{toNS(u.Time), u.KeyID, u.KeyName, u.Model, u.Channel, int64(u.Status), u.Input, u.Output,
		u.Cached, u.Reasoning, int64(u.Latency), int64(u.FirstToken), u.RequestID, u.ClientStyle}
	return s.vals[:], nil
}

func (s *usageSource) Err() error { return nil }

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
	w := (&where{}).usage(f)
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

// where gathers the conditions of a usage query and their arguments.
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
// zero totals.
func (s *sqlStore) Spend(ctx context.Context, keyIDs []int64) (map[int64]Spend, error) {
	cond := ""
	if len(keyIDs) > 0 {
		cond = " WHERE key_id IN (" + intList(keyIDs) + ")"
	}
	// CAST: PostgreSQL's SUM of BIGINT is NUMERIC.
	rows, err := s.r.QueryContext(ctx, `SELECT key_id, COUNT(*), CAST(SUM(input_tokens) AS BIGINT),
		CAST(SUM(output_tokens) AS BIGINT) FROM usage_log`+cond+` GROUP BY key_id`)
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

// pruneBatch is the most usage rows one DELETE takes: SQLite has a single
// writer, and a delete of months of rows in one transaction would make
// every usage batch behind it wait.
const pruneBatch = 5000

func (s *sqlStore) DeleteUsageBefore(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.w.ExecContext(ctx, `DELETE FROM usage_log WHERE id IN
			(SELECT id FROM usage_log WHERE time_ns < $1 ORDER BY id LIMIT `+strconv.Itoa(pruneBatch)+`)`, toNS(t))
		if err != nil {
			return total, s.wrap("delete usage", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, s.wrap("delete usage", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}
