-- Units other than tokens in the per-minute totals, as for SQLite (see
-- its 0007).

CREATE TABLE usage_minute_units (
	key_id BIGINT NOT NULL,
	minute BIGINT NOT NULL,
	unit   TEXT   NOT NULL,
	units  BIGINT NOT NULL,
	PRIMARY KEY (key_id, minute, unit)
);

INSERT INTO usage_minute_units (key_id, minute, unit, units)
	SELECT l.key_id, r.time_ns / 60000000000, l.unit, SUM(u.units)
	FROM usage_units u JOIN usage_rows r ON r.id = u.id JOIN usage_labels l ON l.id = r.label_id
	GROUP BY l.key_id, r.time_ns / 60000000000, l.unit;
