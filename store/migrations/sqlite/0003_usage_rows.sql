-- The usage log without secondary indexes, so that writing a row costs
-- little (see README.md). A row is its numbers and a label: what the
-- request was (key, model, channel, status, client style), one small table
-- of the few combinations seen. usage_minutes, written once per batch,
-- holds per key and minute of time_ns the range of row ids and the totals,
-- which the console's queries by time and by key use instead of indexes.
-- The view usage_log shows the rows as they were before.

CREATE TABLE usage_labels (
	id           INTEGER PRIMARY KEY,
	key_id       INTEGER NOT NULL,
	key_name     TEXT    NOT NULL,
	model        TEXT    NOT NULL,
	channel      TEXT    NOT NULL,
	status       INTEGER NOT NULL,
	client_style TEXT    NOT NULL,
	UNIQUE (key_id, key_name, model, channel, status, client_style)
) STRICT;

-- ids are MAX(id) + 1 onward, given under the write lock: rows are
-- appended in the order they were recorded.
CREATE TABLE usage_rows (
	id               INTEGER PRIMARY KEY,
	time_ns          INTEGER NOT NULL,
	label_id         INTEGER NOT NULL,
	input_tokens     INTEGER NOT NULL,
	output_tokens    INTEGER NOT NULL,
	cached_tokens    INTEGER NOT NULL,
	reasoning_tokens INTEGER NOT NULL,
	latency_ns       INTEGER NOT NULL,
	first_token_ns   INTEGER NOT NULL,
	request_id       TEXT    NOT NULL
) STRICT;

-- minute is time_ns / 60e9 as both databases divide integers (towards
-- zero). first_id and last_id bound the ids of the key's rows of that
-- minute; requests and the sums are exact, also after retention.
CREATE TABLE usage_minutes (
	key_id        INTEGER NOT NULL,
	minute        INTEGER NOT NULL,
	first_id      INTEGER NOT NULL,
	last_id       INTEGER NOT NULL,
	requests      INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	PRIMARY KEY (key_id, minute)
) STRICT, WITHOUT ROWID;
CREATE INDEX usage_minutes_minute ON usage_minutes (minute);

INSERT INTO usage_labels (key_id, key_name, model, channel, status, client_style)
	SELECT DISTINCT key_id, key_name, model, channel, status, client_style FROM usage_log;
INSERT INTO usage_rows (id, time_ns, label_id, input_tokens, output_tokens, cached_tokens, reasoning_tokens,
		latency_ns, first_token_ns, request_id)
	SELECT u.id, u.time_ns, l.id, u.input_tokens, u.output_tokens, u.cached_tokens, u.reasoning_tokens,
		u.latency_ns, u.first_token_ns, u.request_id
	FROM usage_log u JOIN usage_labels l ON l.key_id = u.key_id AND l.key_name = u.key_name
		AND l.model = u.model AND l.channel = u.channel AND l.status = u.status AND l.client_style = u.client_style;
INSERT INTO usage_minutes (key_id, minute, first_id, last_id, requests, input_tokens, output_tokens)
	SELECT key_id, time_ns / 60000000000, MIN(id), MAX(id), COUNT(*), SUM(input_tokens), SUM(output_tokens)
	FROM usage_log GROUP BY key_id, time_ns / 60000000000;
DROP TABLE usage_log;

CREATE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style
	FROM usage_rows r CROSS JOIN usage_labels l WHERE l.id = r.label_id;
