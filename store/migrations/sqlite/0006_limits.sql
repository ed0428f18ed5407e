-- Limits made in the console, as the configuration file has them:
--
-- A key's limits on one public model (keys[].model_limits), a JSON object
-- {"model": {"rpm": n, "tpm": n}}; '{}' for none, which keys made before
-- get.
--
-- A channel's rpm and tpm (channels[].rpm/tpm): the upstream's quota for
-- the whole fleet; 0 = unlimited, which channels made before get.

ALTER TABLE api_keys ADD COLUMN model_limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE channels ADD COLUMN rpm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN tpm INTEGER NOT NULL DEFAULT 0;
