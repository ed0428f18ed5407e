-- Why a kept response is incomplete (incomplete_details.reason, such as
-- max_output_tokens or content_filter), for a GET to say it; NULL for a
-- response that is not incomplete, and for those kept before.
ALTER TABLE responses ADD COLUMN incomplete_reason TEXT;
