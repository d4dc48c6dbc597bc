ALTER TABLE "prompts" ADD COLUMN "tool_names" text COLLATE "C" DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX "prompts_organization_tool_names_idx" ON "prompts" USING btree ("organization_id",left("tool_names", 200) NULLS FIRST,"id");--> statement-breakpoint
-- A prompt's tool names are those of its linked tools of its own organization, joined by `,` in
-- tool id order, whoever writes the links or renames a tool (the records loader, an operator's
-- fix). A link removed with its tool or prompt goes through prompt_tools' delete trigger.
CREATE FUNCTION "prompt_tool_names"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed integer[] := ARRAY[]::integer[];
BEGIN
  IF TG_TABLE_NAME = 'tools' THEN
    changed := ARRAY(SELECT "prompt_id" FROM "prompt_tools" WHERE "tool_id" = NEW."id");
  ELSE
    IF TG_OP IN ('UPDATE', 'DELETE') THEN changed := changed || OLD."prompt_id"; END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN changed := changed || NEW."prompt_id"; END IF;
  END IF;
  UPDATE "prompts" p SET "tool_names" = coalesce((SELECT string_agg(t."name", ',' ORDER BY t."id")
    FROM "prompt_tools" pt JOIN "tools" t ON t."id" = pt."tool_id"
    WHERE pt."prompt_id" = p."id" AND t."organization_id" = p."organization_id"), '')
  WHERE p."id" = ANY(changed);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "prompt_tools_names" AFTER INSERT OR UPDATE OR DELETE ON "prompt_tools"
  FOR EACH ROW EXECUTE FUNCTION "prompt_tool_names"();--> statement-breakpoint
CREATE TRIGGER "tools_names" AFTER UPDATE OF "name", "organization_id" ON "tools"
  FOR EACH ROW
  WHEN (OLD."name" IS DISTINCT FROM NEW."name"
    OR OLD."organization_id" IS DISTINCT FROM NEW."organization_id")
  EXECUTE FUNCTION "prompt_tool_names"();--> statement-breakpoint
-- The links stored before this migration.
UPDATE "prompts" p SET "tool_names" = coalesce((SELECT string_agg(t."name", ',' ORDER BY t."id")
  FROM "prompt_tools" pt JOIN "tools" t ON t."id" = pt."tool_id"
  WHERE pt."prompt_id" = p."id" AND t."organization_id" = p."organization_id"), '');
