-- The Responses API's responses the gateway remembers, by id: which key
-- made each (only that key may reach it), and where it lives. A native
-- one lives upstream, on the channel (and the channel's key, by index)
-- that made it; a translated one the gateway keeps itself, with its input
-- and output items and its usage as JSON (NULL for native ones). Rows go
-- with their key, by retention (created_ns), or on DELETE.
CREATE TABLE responses (
	id           TEXT    PRIMARY KEY,
	key_hash     BLOB    NOT NULL,
	key_id       INTEGER NOT NULL,
	channel      TEXT    NOT NULL,
	key_index    INTEGER NOT NULL,
	model        TEXT    NOT NULL,
	created_ns   INTEGER NOT NULL,
	status       TEXT    NOT NULL,
	native       INTEGER NOT NULL,
	input_items  TEXT,
	output_items TEXT,
	usage        TEXT
) STRICT;
CREATE INDEX responses_created ON responses (created_ns);
CREATE INDEX responses_key ON responses (key_hash);
