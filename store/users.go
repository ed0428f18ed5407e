package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
)

const userCols = `id, name, password_hash, role, disabled, created_ns`

func scanUser(row rowScanner) (User, error) {
	var u User
	var created int64
	err := row.Scan(&u.ID, &u.Name, &u.PasswordHash, &u.Role, &u.Disabled, &created)
	u.Created = fromNS(created)
	return u, err
}

func (s *sqlStore) CreateUser(ctx context.Context, u *User) error {
	created := now()
	err := s.w.QueryRowContext(ctx, `INSERT INTO users (name, password_hash, role, disabled, created_ns)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		u.Name, u.PasswordHash, string(u.Role), u.Disabled, toNS(created)).Scan(&u.ID)
	if err != nil {
		return s.wrap(fmt.Sprintf("create user %q", u.Name), err)
	}
	u.Created = created
	return nil
}

func (s *sqlStore) User(ctx context.Context, id int64) (*User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("user %d", id), err)
	}
	return &u, nil
}

func (s *sqlStore) UserByName(ctx context.Context, name string) (*User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name = $1`, name))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("user %q", name), err)
	}
	return &u, nil
}

// Users lists every user by id.
func (s *sqlStore) Users(ctx context.Context) ([]User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY id`)
	if err != nil {
		return nil, s.wrap("users", err)
	}
	list, err := collect(rows, scanUser)
	return list, s.wrap("users", err)
}

// UpdateUser journals the user's keys as changed: disabling a user stops
// them on every node.
func (s *sqlStore) UpdateUser(ctx context.Context, u *User) error {
	return s.changeKeys(ctx, fmt.Sprintf("update user %d", u.ID), `owner_id = $1`, u.ID,
		`UPDATE users SET name = $1, password_hash = $2, role = $3, disabled = $4 WHERE id = $5`,
		u.Name, u.PasswordHash, string(u.Role), u.Disabled, u.ID)
}

func (s *sqlStore) SetPassword(ctx context.Context, id int64, hash string) error {
	return s.execOne(ctx, fmt.Sprintf("set password of user %d", id),
		`UPDATE users SET password_hash = $1 WHERE id = $2`, hash, id)
}

// DeleteUser deletes the user; the foreign keys' ON DELETE CASCADE takes
// its keys and sessions in the same statement.
func (s *sqlStore) DeleteUser(ctx context.Context, id int64) error {
	return s.deleteKeys(ctx, fmt.Sprintf("delete user %d", id), `owner_id = $1`, id,
		`DELETE FROM users WHERE id = $1`, id)
}

// CreateSession stores s, setting Created when zero, and deletes the
// sessions that have expired in the same transaction, so the table does
// not grow with every login that was never logged out.
func (s *sqlStore) CreateSession(ctx context.Context, sess *Session) error {
	t := now()
	if sess.Created.IsZero() {
		sess.Created = t
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_ns <= $1`, toNS(t)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (hash, user_id, csrf, created_ns, expires_ns)
			VALUES ($1, $2, $3, $4, $5)`,
			sess.Hash[:], sess.UserID, sess.CSRF, toNS(sess.Created), toNS(sess.Expires))
		return err
	})
	return s.wrap("create session", err)
}

func (s *sqlStore) Session(ctx context.Context, hash [sha256.Size]byte) (*Session, error) {
	sess := Session{Hash: hash}
	var created, expires int64
	err := s.r.QueryRowContext(ctx, `SELECT user_id, csrf, created_ns, expires_ns FROM sessions
		WHERE hash = $1 AND expires_ns > $2`, hash[:], toNS(now())).Scan(&sess.UserID, &sess.CSRF, &created, &expires)
	if err != nil {
		return nil, s.wrap("session", err)
	}
	sess.Created, sess.Expires = fromNS(created), fromNS(expires)
	return &sess, nil
}

func (s *sqlStore) DeleteSession(ctx context.Context, hash [sha256.Size]byte) error {
	return s.execOne(ctx, "delete session", `DELETE FROM sessions WHERE hash = $1`, hash[:])
}

// DeleteUserSessions logs the user out everywhere; none is not an error.
func (s *sqlStore) DeleteUserSessions(ctx context.Context, userID int64) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID)
	return s.wrap(fmt.Sprintf("delete sessions of user %d", userID), err)
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(rowScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}
