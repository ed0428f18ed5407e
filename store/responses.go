package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"time"
)

// Response is a Responses API response the gateway remembers: who made it,
// and where it lives.
type Response struct {
	ID string
	// KeyHash is the SHA-256 of the gateway key that made it: only that
	// key may reach it. KeyID is that key's store id (0 for a key of the
	// configuration file).
	KeyHash [sha256.Size]byte
	KeyID   int64
	// Channel made it, with its upstream key number KeyIndex (a native
	// response lives in that upstream account).
	Channel  string
	KeyIndex int
	Model    string // the public model name
	Created  time.Time
	Status   string // as the API names it: completed, in_progress, cancelled, …
	// Native: the response lives upstream, and its calls go to Channel.
	// Otherwise the gateway keeps it: Input, Output and Usage hold its
	// input items, output items and usage as JSON.
	Native               bool
	Input, Output, Usage []byte
	// Incomplete is why an incomplete response stopped short, as the
	// API's incomplete_details.reason says it (max_output_tokens,
	// content_filter); "" for any other.
	Incomplete string
}

const responseColumns = `id, key_hash, key_id, channel, key_index, model, created_ns, status, native,
	input_items, output_items, usage, incomplete_reason`

// PutResponses writes the responses in one transaction. A response already
// stored under the same id and key gets the new status, and the new items
// and usage where they are set; one under another key is left as it is.
func (s *sqlStore) PutResponses(ctx context.Context, list []Response) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO responses (`+responseColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, incomplete_reason = excluded.incomplete_reason,
				input_items = COALESCE(excluded.input_items, responses.input_items),
				output_items = COALESCE(excluded.output_items, responses.output_items),
				usage = COALESCE(excluded.usage, responses.usage)
			WHERE responses.key_hash = excluded.key_hash`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range list {
			r := &list[i]
			if _, err := st.ExecContext(ctx, r.ID, r.KeyHash[:], r.KeyID, r.Channel, r.KeyIndex, r.Model,
				toNS(r.Created), r.Status, r.Native, nullText(r.Input), nullText(r.Output), nullText(r.Usage),
				nullString(r.Incomplete)); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(fmt.Sprintf("put %d responses", len(list)), err)
}

// nullString is s as a TEXT column: NULL when "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullText is b as a TEXT column: NULL when nil.
func nullText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func (s *sqlStore) Response(ctx context.Context, id string) (*Response, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+responseColumns+` FROM responses WHERE id = $1`, id)
	r, err := scanResponse(row)
	if err != nil {
		return nil, s.wrap("response "+id, err)
	}
	return r, nil
}

func scanResponse(row rowScanner) (*Response, error) {
	var r Response
	var hash []byte
	var created int64
	var in, out, usage, incomplete sql.NullString
	if err := row.Scan(&r.ID, &hash, &r.KeyID, &r.Channel, &r.KeyIndex, &r.Model, &created, &r.Status, &r.Native,
		&in, &out, &usage, &incomplete); err != nil {
		return nil, err
	}
	if len(hash) != sha256.Size {
		return nil, fmt.Errorf("stored key hash has %d bytes", len(hash))
	}
	r.KeyHash, r.Created = [sha256.Size]byte(hash), fromNS(created)
	r.Input, r.Output, r.Usage, r.Incomplete = textBytes(in), textBytes(out), textBytes(usage), incomplete.String
	return &r, nil
}

// textBytes is a nullable TEXT column as bytes: nil for NULL.
func textBytes(v sql.NullString) []byte {
	if !v.Valid {
		return nil
	}
	return []byte(v.String)
}

func (s *sqlStore) DeleteResponse(ctx context.Context, id string) error {
	return s.execOne(ctx, "delete response "+id, `DELETE FROM responses WHERE id = $1`, id)
}

// responsesPruneBatch is the most responses one DELETE takes: fewer than
// pruneBatch usage rows, as a stored response holds a whole conversation.
const responsesPruneBatch = 500

// DeleteResponsesBefore deletes the responses made before t,
// responsesPruneBatch rows per transaction.
func (s *sqlStore) DeleteResponsesBefore(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.w.ExecContext(ctx, `DELETE FROM responses WHERE id IN
			(SELECT id FROM responses WHERE created_ns < $1 LIMIT $2)`, toNS(t), responsesPruneBatch)
		if err != nil {
			return total, s.wrap("delete responses", err)
		}
		n, err := res.RowsAffected()
		total += n
		if err != nil || n < responsesPruneBatch {
			return total, s.wrap("delete responses", err)
		}
	}
}

// deleteKeyResponses deletes, in tx, the responses of the keys the
// condition selects (a WHERE clause on api_keys with $1 for arg): they go
// with their key.
func deleteKeyResponses(ctx context.Context, tx *sql.Tx, where string, arg any) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM responses WHERE key_hash IN (SELECT hash FROM api_keys WHERE `+where+`)`, arg)
	return err
}
