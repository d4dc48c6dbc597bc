-- Substring searches of the prompts' and experiments' texts through pg_trgm's GIN indexes, as
-- the events' description (migration 0001): ILIKE '%x%' with 3 or more characters finds the
-- candidate rows by trigram and rechecks each, where it read every row of the table. Written by
-- hand: drizzle-kit cannot say an operator class.
CREATE INDEX "prompts_name_trgm_idx" ON "prompts" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "prompts_description_trgm_idx" ON "prompts" USING gin ("description" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "prompts_context_trgm_idx" ON "prompts" USING gin ("context" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "experiments_name_trgm_idx" ON "experiments" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "experiments_description_trgm_idx" ON "experiments" USING gin ("description" gin_trgm_ops);
