DROP INDEX "prompts_organization_name_idx";--> statement-breakpoint
CREATE INDEX "prompts_organization_name_idx" ON "prompts" USING btree ("organization_id","name","id");