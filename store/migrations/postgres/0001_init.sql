-- The first schema. Times are Unix nanoseconds in BIGINT columns (0 = none),
-- not timestamptz, so both drivers share every query; see README.md.

CREATE TABLE users (
	id            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name          TEXT    NOT NULL UNIQUE,
	password_hash TEXT    NOT NULL,
	role          TEXT    NOT NULL,
	disabled      BOOLEAN NOT NULL,
	created_ns    BIGINT  NOT NULL
);

CREATE TABLE sessions (
	hash       BYTEA  PRIMARY KEY,
	user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	csrf       TEXT   NOT NULL,
	created_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_ns);

CREATE TABLE api_keys (
	id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name         TEXT    NOT NULL,
	owner_id     BIGINT  REFERENCES users (id) ON DELETE CASCADE,
	hash         BYTEA   NOT NULL UNIQUE,
	prefix       TEXT    NOT NULL,
	models       TEXT    NOT NULL,
	rpm          BIGINT  NOT NULL,
	tpm          BIGINT  NOT NULL,
	expires_ns   BIGINT  NOT NULL,
	enabled      BOOLEAN NOT NULL,
	created_ns   BIGINT  NOT NULL,
	last_used_ns BIGINT  NOT NULL
);
CREATE INDEX api_keys_owner ON api_keys (owner_id);

CREATE TABLE channels (
	id            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name          TEXT    NOT NULL UNIQUE,
	type          TEXT    NOT NULL,
	base_url      TEXT    NOT NULL,
	api_keys      BYTEA,
	models        TEXT    NOT NULL,
	model_map     TEXT    NOT NULL,
	priority      BIGINT  NOT NULL,
	weight        BIGINT  NOT NULL,
	api_version   TEXT    NOT NULL,
	connect_ns    BIGINT  NOT NULL,
	first_byte_ns BIGINT  NOT NULL,
	idle_ns       BIGINT  NOT NULL,
	total_ns      BIGINT  NOT NULL,
	enabled       BOOLEAN NOT NULL,
	created_ns    BIGINT  NOT NULL,
	updated_ns    BIGINT  NOT NULL
);

CREATE TABLE usage_log (
	id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time_ns          BIGINT NOT NULL,
	key_id           BIGINT NOT NULL,
	key_name         TEXT   NOT NULL,
	model            TEXT   NOT NULL,
	channel          TEXT   NOT NULL,
	status           BIGINT NOT NULL,
	input_tokens     BIGINT NOT NULL,
	output_tokens    BIGINT NOT NULL,
	cached_tokens    BIGINT NOT NULL,
	reasoning_tokens BIGINT NOT NULL,
	latency_ns       BIGINT NOT NULL,
	first_token_ns   BIGINT NOT NULL,
	request_id       TEXT   NOT NULL,
	client_style     TEXT   NOT NULL
);
CREATE INDEX usage_log_time ON usage_log (time_ns);
CREATE INDEX usage_log_key ON usage_log (key_id, id);
