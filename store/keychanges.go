package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"time"
)

// keyChangesKept is how long the key-change journal keeps a row: far
// longer than a node's poll interval, so a node that paused misses
// nothing that its cache (30 s entries) still holds.
const keyChangesKept = time.Hour

// journalKeys records, in tx, a change of the keys the condition selects
// (a WHERE clause on api_keys with $1 for arg), and deletes the journal's
// rows past keyChangesKept.
func journalKeys(ctx context.Context, tx *sql.Tx, where string, arg any) error {
	t := time.Now()
	if _, err := tx.ExecContext(ctx, `INSERT INTO key_changes (hash, at_ns)
		SELECT hash, $2 FROM api_keys WHERE `+where, arg, t.UnixNano()); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM key_changes WHERE at_ns < $1`, t.Add(-keyChangesKept).UnixNano())
	return err
}

// changeKeys runs the statement, which must change exactly one row (else
// ErrNotFound), after journaling the keys where selects, in one
// transaction.
func (s *sqlStore) changeKeys(ctx context.Context, what, where string, arg any, query string, args ...any) error {
	return s.changeKeysThen(ctx, what, where, arg, nil, query, args...)
}

// deleteKeys is changeKeys for a statement that deletes the keys where
// selects: their responses go with them.
func (s *sqlStore) deleteKeys(ctx context.Context, what, where string, arg any, query string, args ...any) error {
	return s.changeKeysThen(ctx, what, where, arg, deleteKeyResponses, query, args...)
}

// changeKeysThen is changeKeys that also runs also, when not nil, on the
// keys where selects, before the statement.
func (s *sqlStore) changeKeysThen(ctx context.Context, what, where string, arg any,
	also func(context.Context, *sql.Tx, string, any) error, query string, args ...any) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := journalKeys(ctx, tx, where, arg); err != nil {
			return err
		}
		if also != nil {
			if err := also(ctx, tx, where, arg); err != nil {
				return err
			}
		}
		return execOne(ctx, tx, query, args...)
	})
	return s.wrap(what, err)
}

func (s *sqlStore) KeyChanges(ctx context.Context, after int64, limit int) ([][sha256.Size]byte, int64, error) {
	if after < 0 {
		var last sql.NullInt64
		err := s.r.QueryRowContext(ctx, `SELECT MAX(id) FROM key_changes`).Scan(&last)
		return nil, last.Int64, s.wrap("key changes", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, hash FROM key_changes WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, after, s.wrap("key changes", err)
	}
	defer rows.Close()
	var hashes [][sha256.Size]byte
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&after, &h); err != nil {
			return nil, after, s.wrap("key changes", err)
		}
		if len(h) != sha256.Size {
			return nil, after, fmt.Errorf("store: key change %d: stored hash has %d bytes", after, len(h))
		}
		hashes = append(hashes, [sha256.Size]byte(h))
	}
	return hashes, after, s.wrap("key changes", rows.Err())
}
