package store

// SQLite reads a batch of usage rows straight from Go memory, through a
// virtual table: one statement, prepared once per connection (one for
// each set of columns bound once, below),
//
//	INSERT OR FAIL INTO usage_rows (...) SELECT ... FROM temp.usage_batch ORDER BY rowid
//
// copies the batch. Binding the rows as parameters of multi-row INSERTs
// instead took a call into SQLite per value, each taking and releasing the
// connection's mutex, which modernc.org/sqlite's C runtime makes slow:
// inserting alone, 1.3 µs a row bound, 0.95 through the table. The table
// hands SQLite each value of the row in place, with no lock.
//
// The module is registered once for the process. Each store's writing
// connection makes its own temp.usage_batch, whose argument is the number
// of the store's batchSlot: the slot holds the batch being written, set
// under stmtsMu, and the table reads it.

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"modernc.org/sqlite/vtab"
)

// sqliteStmts are the statements of a batch prepared on one SQLite
// connection. modernc.org/sqlite keeps no cache of statements: one given as
// text is parsed again at every Exec.
type sqliteStmts struct {
	conn any // the driver connection they were prepared on
	// inserts by the columns of the batch that are the same in every row
	// (sameColumns) and those of them that are 0 (insertKey), prepared
	// when first needed.
	inserts map[insertKey]driver.StmtExecContext
	sums    [len(sumSQL)]driver.StmtExecContext
}

// insertKey says which columns a batch's INSERT takes once, not from the
// virtual table: same, a bit per column of rowCols whose value is the same
// in every row; zero, those of same whose value is 0.
type insertKey struct{ same, zero uint8 }

// insertRowsSQLite copies a batch from temp.usage_batch (below), the
// columns of k.same given once as parameters in column order, but those of
// k.zero, which the INSERT leaves out. It is INSERT OR FAIL: a multi-row
// INSERT that may abort halfway (OR ABORT, the default) keeps a statement
// journal to undo its own rows, a copy of every page it changes; AddUsage
// rolls the whole transaction back on any error, so FAIL, which keeps no
// journal, loses nothing.
//
// SQLite asks the table for a column only when the statement reads it,
// and each value the table gives costs ~0.1 µs (modernc.org/sqlite finds
// the cursor in a map under a lock, then copies the value in): a column the
// same in every row of the batch (the label of a gateway that serves one
// key and model) is bound once instead. A parameter is still read and
// copied for each row; a column left out takes its DEFAULT 0 (migration
// 0010), which SQLite sets once before the loop: cached and reasoning
// tokens and the time to first token of a non-stream request, usually 0,
// then cost a row nothing but their byte in the record.
func insertRowsSQLite(k insertKey) string {
	var cols, vals []string
	n := 0
	for i, col := range strings.Split(rowCols, ",") {
		col = strings.TrimSpace(col)
		switch {
		case k.zero&(1<<i) != 0:
			continue
		case k.same&(1<<i) != 0:
			n++
			vals = append(vals, "$"+strconv.Itoa(n))
		default:
			vals = append(vals, col)
		}
		cols = append(cols, col)
	}
	return `INSERT OR FAIL INTO usage_rows (` + strings.Join(cols, ", ") + `) SELECT ` + strings.Join(vals, ", ") +
		` FROM temp.usage_batch ORDER BY rowid`
}

// sameColumns are the columns that may be bound once for a batch: label,
// tokens and time to first token (time, latency and request id differ
// from row to row).
var sameColumns = [...]int{1, 2, 3, 4, 5, 7}

// zeroColumns are those of sameColumns a batch leaves out, for their
// DEFAULT 0 (migration 0010), when they are 0 in every row: tokens and
// time to first token. Never the label: ids start at 1, so a row at a
// default label would be missing from usage_log's join. Each zero column
// is varying, bound or left out, the label varying or bound, so a
// connection prepares at most 3⁵·2 = 486 INSERTs.
const zeroColumns uint8 = 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<7

// sameValues returns which sameColumns have the same value in every row of
// slot, and which of those it leaves out at 0 (zeroColumns), and the values
// of the others in column order.
func sameValues(slot *batchSlot, args []driver.NamedValue) (insertKey, []driver.NamedValue) {
	var k insertKey
	ints := slot.ints
	for _, col := range sameColumns {
		v, i := ints[col], col+intCols
		for ; i < len(ints) && ints[i] == v; i += intCols {
		}
		switch {
		case i < len(ints):
		case v == 0 && zeroColumns&(1<<col) != 0:
			k.same |= 1 << col
			k.zero |= 1 << col
		default:
			k.same |= 1 << col
			args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
		}
	}
	return k, args
}

// insertUsageSQLite inserts rows on the SQLite connection dc and returns
// the first one's id. A row inserted without an id gets the largest in the
// table plus one, so the batch's ids follow each other, up to the last
// inserted.
func insertUsageSQLite(ctx context.Context, s *sqlStore, dc any, rows []Usage, labels []int64) (int64, error) {
	s.stmtsMu.Lock()
	defer s.stmtsMu.Unlock()
	st, err := s.sqliteStmts(ctx, dc)
	if err != nil {
		return 0, err
	}
	s.slot.fill(rows, labels)
	var buf [len(sameColumns)]driver.NamedValue
	k, args := sameValues(s.slot, buf[:0])
	insert, err := st.insert(ctx, k)
	var res driver.Result
	if err == nil {
		res, err = insert.ExecContext(ctx, args)
	}
	s.slot.rows = nil
	if err != nil {
		return 0, err
	}
	last, err := res.LastInsertId()
	return last - int64(len(rows)) + 1, err
}

// sqliteStmts returns the statements prepared on dc, preparing them (and
// the connection's temp.usage_batch) when dc is not the connection they
// were prepared on. Called with stmtsMu held.
func (s *sqlStore) sqliteStmts(ctx context.Context, dc any) (*sqliteStmts, error) {
	if s.stmts != nil && s.stmts.conn == dc {
		return s.stmts, nil
	}
	// The statements of a connection database/sql closed went with it.
	s.stmts = nil
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.usage_batch USING `+
		usageBatchModule+`(`+strconv.FormatInt(s.slotN, 10)+`)`, nil)
	if err != nil {
		return nil, err
	}
	st := &sqliteStmts{conn: dc, inserts: map[insertKey]driver.StmtExecContext{}}
	for i, q := range sumSQL {
		if st.sums[i], err = prepare(ctx, dc, q); err != nil {
			st.close()
			return nil, err
		}
	}
	s.stmts = st
	return st, nil
}

func prepare(ctx context.Context, dc any, query string) (driver.StmtExecContext, error) {
	st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext), nil
}

// insert returns the INSERT of a batch whose columns k takes once,
// preparing it the first time.
func (st *sqliteStmts) insert(ctx context.Context, k insertKey) (driver.StmtExecContext, error) {
	if x := st.inserts[k]; x != nil {
		return x, nil
	}
	x, err := prepare(ctx, st.conn, insertRowsSQLite(k))
	if err != nil {
		return nil, err
	}
	st.inserts[k] = x
	return x, nil
}

func (st *sqliteStmts) close() {
	for _, x := range st.sums {
		if x != nil {
			x.(driver.Stmt).Close()
		}
	}
	for _, x := range st.inserts {
		x.(driver.Stmt).Close()
	}
}

// addSumsSQLite adds the sums m of a batch on the SQLite connection dc,
// with statements prepared once.
func addSumsSQLite(ctx context.Context, s *sqlStore, dc any, m map[minuteKey]minuteSums) error {
	s.stmtsMu.Lock()
	defer s.stmtsMu.Unlock()
	st, err := s.sqliteStmts(ctx, dc)
	if err != nil {
		return err
	}
	var named [7]driver.NamedValue
	return eachSum(m, func(stmt int, args ...any) error {
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		_, err := st.sums[stmt].ExecContext(ctx, named[:len(args)])
		return err
	})
}

const usageBatchModule = "rosetta_usage_batch"

func init() {
	if err := vtab.RegisterModule(nil, usageBatchModule, batchModule{}); err != nil {
		panic("store: cannot register the SQLite module " + usageBatchModule + ": " + err.Error())
	}
}

// batchSlot is a store's batch being written: its rows, and their integer
// columns (intCols a row, in rowCols' order), worked out once before
// SQLite reads them.
type batchSlot struct {
	rows []Usage
	ints []int64
}

// intCols is the number of integer columns of rowCols, the first ones.
const intCols = 8

// fill sets the slot to rows, whose label ids are labels.
func (s *batchSlot) fill(rows []Usage, labels []int64) {
	s.rows, s.ints = rows, s.ints[:0]
	for i := range rows {
		u := &rows[i]
		s.ints = append(s.ints, toNS(u.Time), labels[i], u.Input, u.Output, u.Cached, u.Reasoning,
			int64(u.Latency), int64(u.FirstToken))
	}
}

// batchSlots are the slots of the open stores, by number.
var batchSlots struct {
	sync.Mutex
	m    map[int64]*batchSlot
	last int64
}

// newBatchSlot adds a slot and returns its number.
func newBatchSlot() (int64, *batchSlot) {
	batchSlots.Lock()
	defer batchSlots.Unlock()
	if batchSlots.m == nil {
		batchSlots.m = make(map[int64]*batchSlot)
	}
	batchSlots.last++
	slot := &batchSlot{}
	batchSlots.m[batchSlots.last] = slot
	return batchSlots.last, slot
}

func dropBatchSlot(n int64) {
	batchSlots.Lock()
	delete(batchSlots.m, n)
	batchSlots.Unlock()
}

// batchModule makes temp.usage_batch tables: CREATE VIRTUAL TABLE
// temp.usage_batch USING rosetta_usage_batch(slot number).
type batchModule struct{}

func (m batchModule) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	return m.Connect(ctx, args)
}

func (batchModule) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	if len(args) != 4 {
		return nil, errors.New(usageBatchModule + " takes a slot number")
	}
	n, err := strconv.ParseInt(args[3], 10, 64)
	batchSlots.Lock()
	slot := batchSlots.m[n]
	batchSlots.Unlock()
	if err != nil || slot == nil {
		return nil, errors.New(usageBatchModule + ": no slot " + args[3])
	}
	return batchTable{slot}, ctx.Declare(`CREATE TABLE x (` + rowCols + `)`)
}

type batchTable struct{ slot *batchSlot }

// BestIndex says a scan comes in rowid order, the order of the batch, so
// that SQLite needs no sort for ORDER BY rowid.
func (batchTable) BestIndex(info *vtab.IndexInfo) error {
	info.OrderByConsumed = len(info.OrderBy) == 1 && info.OrderBy[0].Column == -1 && !info.OrderBy[0].Desc
	return nil
}

func (t batchTable) Open() (vtab.Cursor, error) { return &batchCursor{slot: t.slot}, nil }
func (batchTable) Disconnect() error            { return nil }
func (batchTable) Destroy() error               { return nil }

// batchCursor walks the slot's rows. Its columns are rowCols.
type batchCursor struct {
	slot *batchSlot
	i    int
}

func (c *batchCursor) Filter(int, string, []vtab.Value) error { c.i = 0; return nil }
func (c *batchCursor) Next() error                            { c.i++; return nil }
func (c *batchCursor) Eof() bool                              { return c.i >= len(c.slot.rows) }
func (c *batchCursor) Rowid() (int64, error)                  { return int64(c.i), nil }
func (c *batchCursor) Close() error                           { return nil }

// Column gives a value without boxing it (a heap allocation for every
// value but small integers and empty strings): the interface points at the
// row's request id, or at its integer in the slot, which modernc.org/sqlite's
// trampoline copies into SQLite before it returns. 4 to 6 allocations a
// row, ~0.1 µs each on this VM, were most of the Go heap the writer used.
func (c *batchCursor) Column(col int) (vtab.Value, error) {
	if col == intCols {
		return valueAt(stringType, unsafe.Pointer(&c.slot.rows[c.i].RequestID)), nil
	}
	if uint(col) < intCols {
		return valueAt(int64Type, unsafe.Pointer(&c.slot.ints[c.i*intCols+col])), nil
	}
	return nil, errors.New(usageBatchModule + ": no column " + strconv.Itoa(col))
}

// eface is the layout of an empty interface: its dynamic type and a
// pointer to its value.
type eface struct{ typ, data unsafe.Pointer }

var (
	int64Type  = typeOf(int64(0))
	stringType = typeOf("")
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// valueAt is the interface of dynamic type typ whose value is at p, as a
// conversion to any would make it, without copying the value to the heap.
// The value must not change while the interface is in use.
func valueAt(typ, p unsafe.Pointer) any {
	e := eface{typ: typ, data: p}
	return *(*any)(unsafe.Pointer(&e))
}
