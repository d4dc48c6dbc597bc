-- Substring search on event descriptions through pg_trgm's GIN index: ILIKE '%x%' with 3+
-- characters finds candidate rows by trigram and rechecks each, so the results are those of the
-- plain scan. pg_trgm is a trusted extension: the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "events_description_trgm_idx" ON "events" USING gin ("description" gin_trgm_ops);
