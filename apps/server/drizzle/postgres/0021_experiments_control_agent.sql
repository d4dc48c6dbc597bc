ALTER TABLE "experiments" ADD COLUMN "control_agent_id" integer;--> statement-breakpoint
CREATE INDEX "experiments_organization_control_agent_idx" ON "experiments" USING btree ("organization_id","control_agent_id" NULLS FIRST,"id");--> statement-breakpoint
-- The experiments stored before this migration.
UPDATE "experiments" e SET "control_agent_id" = v."agent_id" FROM "experiment_variants" v
  WHERE v."experiment_id" = e."id" AND v."is_control";
