-- The endpoint a request was made to (chat, completions, embeddings,
-- rerank, images.generations, audio.speech, realtime, ...) becomes part of
-- a usage row's label, so that it costs a row nothing. Labels written
-- before have the endpoint '' (unknown). SQLite cannot change a table's
-- UNIQUE constraint, so usage_labels is made anew with its ids; the view
-- that reads it goes first and comes back with the endpoint.

DROP VIEW usage_log;

CREATE TABLE usage_labels_new (
	id           INTEGER PRIMARY KEY,
	key_id       INTEGER NOT NULL,
	key_name     TEXT    NOT NULL,
	model        TEXT    NOT NULL,
	channel      TEXT    NOT NULL,
	status       INTEGER NOT NULL,
	client_style TEXT    NOT NULL,
	endpoint     TEXT    NOT NULL,
	UNIQUE (key_id, key_name, model, channel, status, client_style, endpoint)
) STRICT;
INSERT INTO usage_labels_new (id, key_id, key_name, model, channel, status, client_style, endpoint)
	SELECT id, key_id, key_name, model, channel, status, client_style, '' FROM usage_labels;
DROP TABLE usage_labels;
ALTER TABLE usage_labels_new RENAME TO usage_labels;

CREATE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint
	FROM usage_rows r CROSS JOIN usage_labels l WHERE l.id = r.label_id;
