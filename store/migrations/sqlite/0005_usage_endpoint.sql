-- What a usage row records besides tokens, at no cost to the rows that do
-- not need it (see README.md):
--
-- The endpoint a request was made to (chat, completions, embeddings,
-- rerank, images.generations, audio.speech, realtime, ...) and the unit of
-- its usage in other measures than tokens (characters, seconds,
-- search_units, images) become part of a row's label. Labels written
-- before have both ''. SQLite cannot change a table's UNIQUE constraint,
-- so usage_labels is made anew with its ids; the view that reads it goes
-- first and comes back with the new columns.
--
-- The count in that unit is not a column of usage_rows, which every row
-- would pay for (BenchmarkUsageWriter on a loaded machine: about +0.5 µs a
-- row), but a row of its own in usage_units, by the usage row's id, for
-- the few rows that have one (media and Cohere requests). The view reads
-- units as 0 for rows without an entry.

CREATE TABLE usage_units (
	id    INTEGER PRIMARY KEY,
	units INTEGER NOT NULL
) STRICT;

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
	unit         TEXT    NOT NULL,
	UNIQUE (key_id, key_name, model, channel, status, client_style, endpoint, unit)
) STRICT;
INSERT INTO usage_labels_new (id, key_id, key_name, model, channel, status, client_style, endpoint, unit)
	SELECT id, key_id, key_name, model, channel, status, client_style, '', '' FROM usage_labels;
DROP TABLE usage_labels;
ALTER TABLE usage_labels_new RENAME TO usage_labels;

-- usage_units is joined last, and by its primary key: a query that reads
-- no units leaves the join out (SQLite omits such a LEFT JOIN).
CREATE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint,
		COALESCE(u.units, 0) AS units, l.unit
	FROM usage_rows r CROSS JOIN usage_labels l LEFT JOIN usage_units u ON u.id = r.id WHERE l.id = r.label_id;
