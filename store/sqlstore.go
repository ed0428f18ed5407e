package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// sqlStore implements Store over database/sql for both drivers.
type sqlStore struct {
	d    *dialect
	w    *sql.DB // writes and transactions (SQLite: one connection)
	r    *sql.DB // plain reads; the same pool as w for PostgreSQL
	seal *Sealer // nil when no secret key was given

	// SQLite: the statements of a usage batch, prepared at the first
	// AddUsage, and the slot its temp.usage_batch reads (usagesqlite.go).
	stmtsMu sync.Mutex
	stmts   *sqliteStmts
	slotN   int64
	slot    *batchSlot

	labelsMu  sync.Mutex
	labels    map[usageLabel]int64 // the ids of the usage labels seen, up to labelsMax (usagelabels.go)
	labelsMax int                  // 0: maxLabels
}

var _ Store = (*sqlStore)(nil)

// now is the store's clock, rounded through the column format so a value
// set on a struct equals the value read back.
func now() time.Time { return fromNS(time.Now().UnixNano()) }

// toNS and fromNS convert between times and the *_ns columns. The zero time
// is 0: time.Time{}.UnixNano() is not.
func toNS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNS(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// rowScanner is what *sql.Row and *sql.Rows share.
type rowScanner interface{ Scan(dest ...any) error }

// wrap turns driver errors into the package's sentinels, with what failed.
// A foreign key violation means a row referred to does not exist.
func (s *sqlStore) wrap(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: %s: %w", what, ErrNotFound)
	case s.d.unique(err):
		return fmt.Errorf("store: %s: %w", what, ErrConflict)
	case s.d.foreignKey(err):
		return fmt.Errorf("store: %s: %w (a row it refers to)", what, ErrNotFound)
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// execOne runs a statement that must change exactly one row: zero rows
// changed is ErrNotFound.
func (s *sqlStore) execOne(ctx context.Context, what, query string, args ...any) error {
	return s.wrap(what, execOne(ctx, s.w, query, args...))
}

// execOne runs a statement on db (a pool or a transaction) that must change
// exactly one row; zero rows changed is sql.ErrNoRows.
func execOne(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = sql.ErrNoRows
	}
	return err
}

// inTx runs fn in a write transaction and commits when it returns nil.
func (s *sqlStore) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// jsonText encodes lists and maps for their TEXT columns.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: cannot encode " + fmt.Sprintf("%T", v) + ": " + err.Error()) // only slices and maps of strings come here
	}
	return string(b)
}

// Ping reports whether the database answers.
func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return err
	}
	return s.r.PingContext(ctx)
}

// Close closes the pools. Calls in flight may fail.
func (s *sqlStore) Close() error {
	// The prepared statements go first: SQLite does not free a connection
	// while statements of it are open. Conn before stmtsMu, as in
	// AddUsage.
	if conn, err := s.w.Conn(context.Background()); err == nil {
		conn.Raw(func(dc any) error {
			s.stmtsMu.Lock()
			defer s.stmtsMu.Unlock()
			if s.stmts != nil && s.stmts.conn == dc {
				s.stmts.close()
			}
			s.stmts = nil
			return nil
		})
		conn.Close()
	}
	if s.slotN != 0 {
		dropBatchSlot(s.slotN)
	}
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}
