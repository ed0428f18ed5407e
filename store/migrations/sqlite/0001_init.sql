-- The first schema. Times are Unix nanoseconds in INTEGER columns (0 = none)
-- so both drivers share every query; see README.md.
-- AUTOINCREMENT keeps SQLite from reusing the id of a deleted user, key or
-- channel: usage rows refer to key ids, and a reused id would hand a deleted
-- key's usage to a new one.

CREATE TABLE users (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	name          TEXT    NOT NULL UNIQUE,
	password_hash TEXT    NOT NULL,
	role          TEXT    NOT NULL,
	disabled      INTEGER NOT NULL,
	created_ns    INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
	hash       BLOB    PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	csrf       TEXT    NOT NULL,
	created_ns INTEGER NOT NULL,
	expires_ns INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_ns);

CREATE TABLE api_keys (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	name         TEXT    NOT NULL,
	owner_id     INTEGER REFERENCES users (id) ON DELETE CASCADE,
	hash         BLOB    NOT NULL UNIQUE,
	prefix       TEXT    NOT NULL,
	models       TEXT    NOT NULL,
	rpm          INTEGER NOT NULL,
	tpm          INTEGER NOT NULL,
	expires_ns   INTEGER NOT NULL,
	enabled      INTEGER NOT NULL,
	created_ns   INTEGER NOT NULL,
	last_used_ns INTEGER NOT NULL
) STRICT;
CREATE INDEX api_keys_owner ON api_keys (owner_id);

CREATE TABLE channels (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	name          TEXT    NOT NULL UNIQUE,
	type          TEXT    NOT NULL,
	base_url      TEXT    NOT NULL,
	api_keys      BLOB,
	models        TEXT    NOT NULL,
	model_map     TEXT    NOT NULL,
	priority      INTEGER NOT NULL,
	weight        INTEGER NOT NULL,
	api_version   TEXT    NOT NULL,
	connect_ns    INTEGER NOT NULL,
	first_byte_ns INTEGER NOT NULL,
	idle_ns       INTEGER NOT NULL,
	total_ns      INTEGER NOT NULL,
	enabled       INTEGER NOT NULL,
	created_ns    INTEGER NOT NULL,
	updated_ns    INTEGER NOT NULL
) STRICT;

-- Rows are only ever appended and, by retention, deleted oldest first, so
-- the plain rowid (no AUTOINCREMENT) never hands out an id twice that matters.
CREATE TABLE usage_log (
	id               INTEGER PRIMARY KEY,
	time_ns          INTEGER NOT NULL,
	key_id           INTEGER NOT NULL,
	key_name         TEXT    NOT NULL,
	model            TEXT    NOT NULL,
	channel          TEXT    NOT NULL,
	status           INTEGER NOT NULL,
	input_tokens     INTEGER NOT NULL,
	output_tokens    INTEGER NOT NULL,
	cached_tokens    INTEGER NOT NULL,
	reasoning_tokens INTEGER NOT NULL,
	latency_ns       INTEGER NOT NULL,
	first_token_ns   INTEGER NOT NULL,
	request_id       TEXT    NOT NULL,
	client_style     TEXT    NOT NULL
) STRICT;
CREATE INDEX usage_log_time ON usage_log (time_ns);
CREATE INDEX usage_log_key ON usage_log (key_id, id);
