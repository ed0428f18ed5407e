package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// keySelect reads keys with their owner's disabled flag: a disabled
// user's keys stop working without being changed themselves, and work
// again when the user is enabled.
const keySelect = `SELECT k.id, k.name, k.owner_id, k.hash, k.prefix, k.models, k.rpm, k.tpm,
	k.model_limits, k.expires_ns, k.enabled, k.created_ns, k.last_used_ns, COALESCE(u.disabled, false)
	FROM api_keys k LEFT JOIN users u ON u.id = k.owner_id`

func scanKey(row rowScanner) (Key, error) {
	var k Key
	var owner sql.NullInt64
	var hash []byte
	var models, modelLimits string
	var expires, created, lastUsed int64
	err := row.Scan(&k.ID, &k.Name, &owner, &hash, &k.Prefix, &models, &k.RPM, &k.TPM,
		&modelLimits, &expires, &k.Enabled, &created, &lastUsed, &k.OwnerDisabled)
	if err != nil {
		return k, err
	}
	if len(hash) != sha256.Size {
		return k, fmt.Errorf("key %d: stored hash has %d bytes", k.ID, len(hash))
	}
	copy(k.Hash[:], hash)
	k.OwnerID = owner.Int64
	k.Expires, k.Created, k.LastUsed = fromNS(expires), fromNS(created), fromNS(lastUsed)
	if err := json.Unmarshal([]byte(modelLimits), &k.ModelLimits); err != nil {
		return k, fmt.Errorf("key %d: model_limits: %w", k.ID, err)
	}
	if len(k.ModelLimits) == 0 {
		k.ModelLimits = nil // '{}' reads back as the nil it was written from
	}
	return k, json.Unmarshal([]byte(models), &k.Models)
}

// modelLimitsText is a key's model limits for their column: '{}' for none.
func modelLimitsText(m map[string]Limits) string {
	if len(m) == 0 {
		return "{}"
	}
	return jsonText(m)
}

// owner maps OwnerID 0 (a key no console user owns) to NULL, which the
// foreign key to users allows.
func owner(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

func (s *sqlStore) CreateKey(ctx context.Context, k *Key) error {
	created := now()
	err := s.w.QueryRowContext(ctx, `INSERT INTO api_keys
		(name, owner_id, hash, prefix, models, rpm, tpm, model_limits, expires_ns, enabled, created_ns, last_used_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		k.Name, owner(k.OwnerID), k.Hash[:], k.Prefix, jsonText(k.Models), k.RPM, k.TPM, modelLimitsText(k.ModelLimits),
		toNS(k.Expires), k.Enabled, toNS(created), toNS(k.LastUsed)).Scan(&k.ID)
	if err != nil {
		return s.wrap(fmt.Sprintf("create key %q", k.Name), err)
	}
	k.Created = created
	return nil
}

func (s *sqlStore) Key(ctx context.Context, id int64) (*Key, error) {
	k, err := scanKey(s.r.QueryRowContext(ctx, keySelect+` WHERE k.id = $1`, id))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("key %d", id), err)
	}
	return &k, nil
}

func (s *sqlStore) KeyByHash(ctx context.Context, hash [sha256.Size]byte) (*Key, error) {
	k, err := scanKey(s.r.QueryRowContext(ctx, keySelect+` WHERE k.hash = $1`, hash[:]))
	if err != nil {
		return nil, s.wrap("key by hash", err)
	}
	return &k, nil
}

// Keys lists the keys of ownerID by id, or every key when ownerID is 0.
func (s *sqlStore) Keys(ctx context.Context, ownerID int64) ([]Key, error) {
	q, args := keySelect+` ORDER BY k.id`, []any(nil)
	if ownerID != 0 {
		q, args = keySelect+` WHERE k.owner_id = $1 ORDER BY k.id`, []any{ownerID}
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("keys", err)
	}
	list, err := collect(rows, scanKey)
	return list, s.wrap("keys", err)
}

// UpdateKey can revoke a key but never enable it again: an edit made from
// a copy read before a revoke must not bring a leaked key back.
func (s *sqlStore) UpdateKey(ctx context.Context, k *Key) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := journalKeys(ctx, tx, `id = $1`, k.ID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `UPDATE api_keys
			SET name = $1, models = $2, rpm = $3, tpm = $4, model_limits = $5, expires_ns = $6, enabled = enabled AND $7
			WHERE id = $8 RETURNING enabled`,
			k.Name, jsonText(k.Models), k.RPM, k.TPM, modelLimitsText(k.ModelLimits), toNS(k.Expires), k.Enabled,
			k.ID).Scan(&k.Enabled)
	})
	return s.wrap(fmt.Sprintf("update key %d", k.ID), err)
}

func (s *sqlStore) DeleteKey(ctx context.Context, id int64) error {
	return s.deleteKeys(ctx, fmt.Sprintf("delete key %d", id), `id = $1`, id, `DELETE FROM api_keys WHERE id = $1`, id)
}

// TouchKeys moves each key's LastUsed forward in one transaction, in id
// order so two nodes touching the same keys lock them in the same order.
// An older time than the stored one, or an unknown id, changes nothing.
func (s *sqlStore) TouchKeys(ctx context.Context, lastUsed map[int64]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(lastUsed))
	for id := range lastUsed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, touchKeySQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range ids {
			if _, err := stmt.ExecContext(ctx, toNS(lastUsed[id]), id); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap("touch keys", err)
}
