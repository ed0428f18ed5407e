-- The endpoint and the unit of a usage row's label, and usage_units for
-- the counts in that unit, as for SQLite (see its 0005). Labels written
-- before have both ''. The unique constraint of 0003 had a name
-- PostgreSQL made up, so it is looked up to be dropped.

CREATE TABLE usage_units (
	id    BIGINT PRIMARY KEY,
	units BIGINT NOT NULL
);

ALTER TABLE usage_labels ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_labels ADD COLUMN unit TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_labels ALTER COLUMN endpoint DROP DEFAULT;
ALTER TABLE usage_labels ALTER COLUMN unit DROP DEFAULT;
DO $$
DECLARE
	old TEXT;
BEGIN
	SELECT conname INTO STRICT old FROM pg_constraint WHERE conrelid = 'usage_labels'::regclass AND contype = 'u';
	EXECUTE format('ALTER TABLE usage_labels DROP CONSTRAINT %I', old);
END $$;
ALTER TABLE usage_labels ADD CONSTRAINT usage_labels_unique
	UNIQUE (key_id, key_name, model, channel, status, client_style, endpoint, unit);

-- A query that reads no units leaves the join out (PostgreSQL removes a
-- LEFT JOIN on a unique key whose columns are not used).
CREATE OR REPLACE VIEW usage_log AS
	SELECT r.id, r.time_ns, l.key_id, l.key_name, l.model, l.channel, l.status, r.input_tokens, r.output_tokens,
		r.cached_tokens, r.reasoning_tokens, r.latency_ns, r.first_token_ns, r.request_id, l.client_style, l.endpoint,
		COALESCE(u.units, 0) AS units, l.unit
	FROM usage_rows r CROSS JOIN usage_labels l LEFT JOIN usage_units u ON u.id = r.id WHERE l.id = r.label_id;
