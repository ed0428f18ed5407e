-- usage_rows without the checks SQLite made on each row a batch inserts:
-- NOT NULL (a HaltIfNull opcode a column), STRICT (a TypeCheck) and the
-- columns' types (INTEGER affinity, applied to every value as the record
-- is made). Together ~1.0k of the ~9.0k instructions a row cost. Only the
-- usage writer inserts here, from Go integers and strings, so the checks
-- never refused a row nor changed a value, and reads compare the columns
-- with integers only (the table has no index but its rowid).
--
-- The token columns and the time to first token get DEFAULT 0: a batch's
-- INSERT leaves out those that are 0 in all its rows (usually cached and
-- reasoning tokens, and a non-stream request's time to first token), and
-- SQLite then sets them once for the batch, not copies them for each row.
-- label_id gets none and is never left out: label ids start at 1, and a
-- row at label 0 would be missing from usage_log's join.
--
-- Every stored record stays valid as it is, so the table's text is changed
-- in place with writable_schema, as SQLite's ALTER TABLE documentation
-- gives for dropping NOT NULL; dropping STRICT and the types changes no
-- record either, and the table has no index whose order affinity could
-- change. No row is copied, whatever the table's size. Making the view
-- again changes the schema's version, so that every connection, in this
-- process or another, reads the new text.
--
-- Only the text migration 0003 made is changed: a table changed outside
-- Rosetta is left as it is, and the migration fails (Go checks that this
-- UPDATE, the last statement to change rows, changed one).
DROP VIEW usage_log;
CREATE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint,
		COALESCE(u.units, 0) AS units, l.unit
	FROM usage_rows r CROSS JOIN usage_labels l LEFT JOIN usage_units u ON u.id = r.id WHERE l.id = r.label_id;
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = 'CREATE TABLE usage_rows (
	id               INTEGER PRIMARY KEY,
	time_ns,
	label_id,
	input_tokens     DEFAULT 0,
	output_tokens    DEFAULT 0,
	cached_tokens    DEFAULT 0,
	reasoning_tokens DEFAULT 0,
	latency_ns,
	first_token_ns   DEFAULT 0,
	request_id
)' WHERE type = 'table' AND name = 'usage_rows' AND sql = 'CREATE TABLE usage_rows (
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
) STRICT';
PRAGMA writable_schema = RESET;
