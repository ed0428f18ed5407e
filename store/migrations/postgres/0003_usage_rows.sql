-- The usage log without secondary indexes, as for SQLite (see its 0003 and
-- README.md): rows of numbers and a label, usage_minutes for the queries
-- by time and by key, and the view usage_log showing the rows as before.

CREATE TABLE usage_labels (
	id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	key_id       BIGINT NOT NULL,
	key_name     TEXT   NOT NULL,
	model        TEXT   NOT NULL,
	channel      TEXT   NOT NULL,
	status       BIGINT NOT NULL,
	client_style TEXT   NOT NULL,
	UNIQUE (key_id, key_name, model, channel, status, client_style)
);

-- ids are MAX(id) + 1 onward, given under an advisory lock held to the
-- batch's commit: rows are appended in the order they were committed,
-- whichever node wrote them.
CREATE TABLE usage_rows (
	id               BIGINT PRIMARY KEY,
	time_ns          BIGINT NOT NULL,
	label_id         BIGINT NOT NULL,
	input_tokens     BIGINT NOT NULL,
	output_tokens    BIGINT NOT NULL,
	cached_tokens    BIGINT NOT NULL,
	reasoning_tokens BIGINT NOT NULL,
	latency_ns       BIGINT NOT NULL,
	first_token_ns   BIGINT NOT NULL,
	request_id       TEXT   NOT NULL
);

CREATE TABLE usage_minutes (
	key_id        BIGINT NOT NULL,
	minute        BIGINT NOT NULL,
	first_id      BIGINT NOT NULL,
	last_id       BIGINT NOT NULL,
	requests      BIGINT NOT NULL,
	input_tokens  BIGINT NOT NULL,
	output_tokens BIGINT NOT NULL,
	PRIMARY KEY (key_id, minute)
);
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
