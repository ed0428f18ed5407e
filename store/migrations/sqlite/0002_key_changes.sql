-- A journal of key changes (edit, revoke, delete, the owner disabled or
-- deleted), so that every node drops the changed keys from its cache
-- within a poll, not when the cache entries age out. Rows older than an
-- hour are deleted as new ones are written: a node polls every second.
CREATE TABLE key_changes (
	id    INTEGER PRIMARY KEY AUTOINCREMENT,
	hash  BLOB    NOT NULL,
	at_ns INTEGER NOT NULL
) STRICT;
CREATE INDEX key_changes_at ON key_changes (at_ns);
