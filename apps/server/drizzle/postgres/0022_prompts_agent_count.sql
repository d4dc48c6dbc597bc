ALTER TABLE "prompts" ADD COLUMN "agent_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "prompts_organization_agent_count_idx" ON "prompts" USING btree ("organization_id","agent_count","id");--> statement-breakpoint
-- A prompt counts the agents of its own organization that name it, whoever writes them (the
-- records loader, an operator's fix). An update that moves no agent changes no count.
CREATE FUNCTION "agents_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE "prompts" SET "agent_count" = "agent_count" - 1
    WHERE "id" = OLD."prompt_id" AND "organization_id" = OLD."organization_id";
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    UPDATE "prompts" SET "agent_count" = "agent_count" + 1
    WHERE "id" = NEW."prompt_id" AND "organization_id" = NEW."organization_id";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "agents_count_insert_delete" AFTER INSERT OR DELETE ON "agents"
  FOR EACH ROW EXECUTE FUNCTION "agents_count"();--> statement-breakpoint
CREATE TRIGGER "agents_count_update" AFTER UPDATE OF "prompt_id", "organization_id" ON "agents"
  FOR EACH ROW
  WHEN (OLD."prompt_id" IS DISTINCT FROM NEW."prompt_id"
    OR OLD."organization_id" IS DISTINCT FROM NEW."organization_id")
  EXECUTE FUNCTION "agents_count"();--> statement-breakpoint
-- The agents stored before this migration.
UPDATE "prompts" p SET "agent_count" = c."n"
FROM (SELECT "prompt_id", "organization_id", count(*) AS "n" FROM "agents"
  WHERE "prompt_id" IS NOT NULL GROUP BY 1, 2) c
WHERE p."id" = c."prompt_id" AND p."organization_id" = c."organization_id";
