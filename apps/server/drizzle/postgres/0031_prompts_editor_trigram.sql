-- A substring search of who last updated a prompt (an editor's address, or part of it) through
-- pg_trgm's GIN index, as the prompts' texts (migration 0030).
CREATE INDEX "prompts_last_updated_by_trgm_idx" ON "prompts" USING gin ("last_updated_by" gin_trgm_ops);
