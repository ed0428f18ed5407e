-- SQLite's 0010 drops the NOT NULL and STRICT checks of usage_rows, which
-- it ran for each row it inserted. PostgreSQL's COPY checks NOT NULL at
-- little cost, so its table keeps them; this file keeps the numbers of
-- both drivers' migrations alike.
SELECT 1;
