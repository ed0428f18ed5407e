-- The upstream attempts of the requests that had a failed one, by the
-- usage row's id, as for SQLite (see its 0008).

CREATE TABLE usage_attempts (
	id          BIGINT NOT NULL,
	seq         BIGINT NOT NULL,
	channel     TEXT   NOT NULL,
	status      BIGINT NOT NULL,
	error       TEXT   NOT NULL,
	duration_ns BIGINT NOT NULL,
	PRIMARY KEY (id, seq)
);
