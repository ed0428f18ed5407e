-- usage_rows without NOT NULL and STRICT, which SQLite checked for each row
-- a batch inserts: nine HaltIfNull opcodes and a TypeCheck a row, ~6 % of a
-- row's instructions. Only the usage writer inserts here, from Go integers
-- and strings, so the checks never refused a row. Removing NOT NULL (or
-- STRICT) leaves every stored record as it was, so the table's text is
-- changed in place as SQLite's ALTER TABLE documentation describes for
-- such changes: no row is copied, whatever the table's size. Making the
-- view again changes the schema's version, so that every connection reads
-- the new text.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = 'CREATE TABLE usage_rows (
	id               INTEGER PRIMARY KEY,
	time_ns          INTEGER,
	label_id         INTEGER,
	input_tokens     INTEGER,
	output_tokens    INTEGER,
	cached_tokens    INTEGER,
	reasoning_tokens INTEGER,
	latency_ns       INTEGER,
	first_token_ns   INTEGER,
	request_id       TEXT
)' WHERE type = 'table' AND name = 'usage_rows';
PRAGMA writable_schema = RESET;
DROP VIEW usage_log;
CREATE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint,
		COALESCE(u.units, 0) AS units, l.unit
	FROM usage_rows r CROSS JOIN usage_labels l LEFT JOIN usage_units u ON u.id = r.id WHERE l.id = r.label_id;
