-- The upstream attempts of the requests that had a failed one (failed
-- over, or failed), for the console's request detail, written with their
-- usage rows in the same batch (see README.md). A row per attempt, by the
-- usage row's id and the attempt's place in the order tried; the requests
-- whose first channel answered, most of them, have none. error is '' for
-- the attempt that answered. Rows go with their usage rows, at retention.

CREATE TABLE usage_attempts (
	id          INTEGER NOT NULL,
	seq         INTEGER NOT NULL,
	channel     TEXT    NOT NULL,
	status      INTEGER NOT NULL,
	error       TEXT    NOT NULL,
	duration_ns INTEGER NOT NULL,
	PRIMARY KEY (id, seq)
) STRICT, WITHOUT ROWID;
