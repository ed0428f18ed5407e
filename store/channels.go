package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

const channelCols = `id, name, type, base_url, api_keys, models, model_map, priority, weight, api_version,
	connect_ns, first_byte_ns, idle_ns, total_ns, rpm, tpm, enabled, created_ns, updated_ns`

// scanChannel reads a row and opens its sealed API keys; keys that do not
// open are reported in KeysErr, not as an error.
func (s *sqlStore) scanChannel(row rowScanner) (Channel, error) {
	var c Channel
	var sealed []byte
	var models, modelMap string
	var t [4]int64
	var created, updated int64
	err := row.Scan(&c.ID, &c.Name, &c.Type, &c.BaseURL, &sealed, &models, &modelMap, &c.Priority, &c.Weight,
		&c.APIVersion, &t[0], &t[1], &t[2], &t[3], &c.RPM, &c.TPM, &c.Enabled, &created, &updated)
	if err != nil {
		return c, err
	}
	c.Timeouts = Timeouts{Connect: time.Duration(t[0]), FirstByte: time.Duration(t[1]),
		Idle: time.Duration(t[2]), Total: time.Duration(t[3])}
	c.Created, c.Updated = fromNS(created), fromNS(updated)
	if err := json.Unmarshal([]byte(models), &c.Models); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(modelMap), &c.ModelMap); err != nil {
		return c, err
	}
	if c.APIKeys, err = s.openAPIKeys(sealed); err != nil {
		c.APIKeys, c.KeysErr = nil, fmt.Errorf("channel %q: %w", c.Name, err)
	}
	return c, nil
}

// sealAPIKeys encrypts the keys for their column. No keys is NULL, which
// needs no secret key; it is an untyped nil because a nil []byte is bound
// as an empty BLOB by SQLite.
func (s *sqlStore) sealAPIKeys(keys []string) (any, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if s.seal == nil {
		return nil, fmt.Errorf("%w: set %s (32 bytes, base64 or hex) to save channels with API keys", ErrSecretKey, SecretKeyEnv)
	}
	return s.seal.Seal([]byte(jsonText(keys))), nil
}

func (s *sqlStore) openAPIKeys(sealed []byte) ([]string, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	if s.seal == nil {
		return nil, fmt.Errorf("%w: set %s to read channels with API keys", ErrSecretKey, SecretKeyEnv)
	}
	plain, err := s.seal.Open(sealed)
	if err != nil {
		return nil, err
	}
	var keys []string
	return keys, json.Unmarshal(plain, &keys)
}

// channelArgs are the columns CreateChannel and UpdateChannel both write,
// in the order of their statements: name through enabled.
func (s *sqlStore) channelArgs(c *Channel) ([]any, error) {
	sealed, err := s.sealAPIKeys(c.APIKeys)
	if err != nil {
		return nil, err
	}
	return []any{c.Name, c.Type, c.BaseURL, sealed, jsonText(c.Models), jsonText(c.ModelMap), c.Priority, c.Weight,
		c.APIVersion, int64(c.Timeouts.Connect), int64(c.Timeouts.FirstByte), int64(c.Timeouts.Idle),
		int64(c.Timeouts.Total), c.RPM, c.TPM, c.Enabled}, nil
}

func (s *sqlStore) CreateChannel(ctx context.Context, c *Channel) error {
	what := fmt.Sprintf("create channel %q", c.Name)
	args, err := s.channelArgs(c)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	t := now()
	err = s.w.QueryRowContext(ctx, `INSERT INTO channels (name, type, base_url, api_keys, models, model_map,
		priority, weight, api_version, connect_ns, first_byte_ns, idle_ns, total_ns, rpm, tpm, enabled, created_ns, updated_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING id`,
		append(args, toNS(t))...).Scan(&c.ID)
	if err != nil {
		return s.wrap(what, err)
	}
	c.Created, c.Updated = t, t
	return nil
}

func (s *sqlStore) Channel(ctx context.Context, id int64) (*Channel, error) {
	c, err := s.scanChannel(s.r.QueryRowContext(ctx, `SELECT `+channelCols+` FROM channels WHERE id = $1`, id))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("channel %d", id), err)
	}
	return &c, nil
}

// Channels lists every channel by id. One whose keys cannot be opened is
// listed with KeysErr set: it must not take the others (and the gateway's
// start) down with it.
func (s *sqlStore) Channels(ctx context.Context) ([]Channel, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+channelCols+` FROM channels ORDER BY id`)
	if err != nil {
		return nil, s.wrap("channels", err)
	}
	list, err := collect(rows, s.scanChannel)
	return list, s.wrap("channels", err)
}

// UpdateChannel rewrites every field but Created, seals the API keys anew
// and sets Updated.
func (s *sqlStore) UpdateChannel(ctx context.Context, c *Channel) error {
	what := fmt.Sprintf("update channel %d", c.ID)
	if c.KeysErr != nil { // saving would replace the unreadable keys with none
		return fmt.Errorf("store: %s: %w", what, c.KeysErr)
	}
	args, err := s.channelArgs(c)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	t := now()
	err = s.execOne(ctx, what, `UPDATE channels SET name = $1, type = $2, base_url = $3, api_keys = $4,
		models = $5, model_map = $6, priority = $7, weight = $8, api_version = $9, connect_ns = $10,
		first_byte_ns = $11, idle_ns = $12, total_ns = $13, rpm = $14, tpm = $15, enabled = $16, updated_ns = $17
		WHERE id = $18`,
		append(args, toNS(t), c.ID)...)
	if err == nil {
		c.Updated = t
	}
	return err
}

func (s *sqlStore) DeleteChannel(ctx context.Context, id int64) error {
	return s.execOne(ctx, fmt.Sprintf("delete channel %d", id), `DELETE FROM channels WHERE id = $1`, id)
}
