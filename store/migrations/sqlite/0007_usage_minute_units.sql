-- Units other than tokens in the per-minute totals: for each key, minute
-- and unit, the sum of the units of the key's rows of that minute in that
-- unit (characters, seconds, search_units, images). Spend and the
-- console's totals read it as they read usage_minutes; a batch adds to it
-- only when some of its rows have units, so the others pay nothing. An
-- entry is deleted by retention once its units are all gone.
--
-- A table of its own rather than columns of usage_minutes: units come by
-- name, a key may use several in one minute, and most minutes have none.

CREATE TABLE usage_minute_units (
	key_id INTEGER NOT NULL,
	minute INTEGER NOT NULL,
	unit   TEXT    NOT NULL,
	units  INTEGER NOT NULL,
	PRIMARY KEY (key_id, minute, unit)
) STRICT, WITHOUT ROWID;

INSERT INTO usage_minute_units (key_id, minute, unit, units)
	SELECT l.key_id, r.time_ns / 60000000000, l.unit, SUM(u.units)
	FROM usage_units u JOIN usage_rows r ON r.id = u.id JOIN usage_labels l ON l.id = r.label_id
	GROUP BY l.key_id, r.time_ns / 60000000000, l.unit;
