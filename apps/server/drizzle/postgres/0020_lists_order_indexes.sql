CREATE INDEX "experiments_organization_name_idx" ON "experiments" USING btree ("organization_id","name","id");--> statement-breakpoint
CREATE INDEX "experiments_organization_status_idx" ON "experiments" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "experiments_organization_target_idx" ON "experiments" USING btree ("organization_id","target_id","id");--> statement-breakpoint
CREATE INDEX "experiments_organization_created_at_idx" ON "experiments" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "experiments_organization_updated_at_idx" ON "experiments" USING btree ("organization_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "experiments_organization_started_at_idx" ON "experiments" USING btree ("organization_id","started_at" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "experiments_organization_stopped_at_idx" ON "experiments" USING btree ("organization_id","stopped_at" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "prompts_organization_llm_config_idx" ON "prompts" USING btree ("organization_id",(("llm_config")::text COLLATE "C") NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "prompts_organization_last_updated_idx" ON "prompts" USING btree ("organization_id","last_updated","id");--> statement-breakpoint
CREATE INDEX "prompts_organization_last_updated_by_idx" ON "prompts" USING btree ("organization_id","last_updated_by" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "prompts_organization_session_end_idx" ON "prompts" USING btree ("organization_id","session_end_enabled","id");