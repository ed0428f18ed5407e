-- Usage in units other than tokens, as for SQLite (see its 0006): the
-- count in usage_units, a row for each usage row that has one, its unit
-- part of the label.

CREATE TABLE usage_units (
	id    BIGINT PRIMARY KEY,
	units BIGINT NOT NULL
);

ALTER TABLE usage_labels ADD COLUMN unit TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_labels ALTER COLUMN unit DROP DEFAULT;
ALTER TABLE usage_labels DROP CONSTRAINT usage_labels_unique;
ALTER TABLE usage_labels ADD CONSTRAINT usage_labels_unique
	UNIQUE (key_id, key_name, model, channel, status, client_style, endpoint, unit);

-- A query that reads no units leaves the join out (PostgreSQL removes a
-- LEFT JOIN on a unique key whose columns are not used).
CREATE OR REPLACE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint,
		COALESCE(u.units, 0) AS units, l.unit
	FROM usage_rows r CROSS JOIN usage_labels l LEFT JOIN usage_units u ON u.id = r.id WHERE l.id = r.label_id;
