-- A key's limits on one public model and a channel's rpm and tpm, as for
-- SQLite (see its 0006). The defaults stay: a node still running a build
-- from before 0006 names none of these columns when it creates a key or
-- a channel, and makes one without limits rather than failing.

ALTER TABLE api_keys ADD COLUMN model_limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE channels ADD COLUMN rpm BIGINT NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN tpm BIGINT NOT NULL DEFAULT 0;
