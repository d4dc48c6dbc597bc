ALTER TABLE "prompts" ADD COLUMN "tool_names" text COLLATE "C" DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX "prompts_organization_tool_names_idx" ON "prompts" USING btree ("organization_id",left("tool_names", 200) NULLS FIRST,"id");--> statement-breakpoint
-- A prompt's tool names are those of its linked tools of its own organization, joined by `,` in
-- tool id order, whoever writes the links or renames a tool (the records loader, an operator's
-- fix). A link removed with its tool or prompt goes through prompt_tools' delete trigger. The
-- links' triggers run once a statement, so a prompt whose links one statement writes is joined
-- once; each prompt is updated by its key (a plan for `= ANY(ids)` may walk the whole table).
CREATE FUNCTION "refresh_prompt_tool_names"("prompt_ids" integer[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  prompt integer;
BEGIN
  FOREACH prompt IN ARRAY "prompt_ids" LOOP
    UPDATE "prompts" p SET "tool_names" = coalesce((SELECT string_agg(t."name", ',' ORDER BY t."id")
      FROM "prompt_tools" pt JOIN "tools" t ON t."id" = pt."tool_id"
      WHERE pt."prompt_id" = p."id" AND t."organization_id" = p."organization_id"), '')
    WHERE p."id" = prompt;
  END LOOP;
END
$$;--> statement-breakpoint
CREATE FUNCTION "prompt_tools_names"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "refresh_prompt_tool_names"(ARRAY(SELECT DISTINCT "prompt_id" FROM "new_links"));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "refresh_prompt_tool_names"(ARRAY(SELECT DISTINCT "prompt_id" FROM "old_links"));
  ELSE
    PERFORM "refresh_prompt_tool_names"(ARRAY(SELECT "prompt_id" FROM "old_links"
      UNION SELECT "prompt_id" FROM "new_links"));
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "prompt_tools_names_insert" AFTER INSERT ON "prompt_tools"
  REFERENCING NEW TABLE AS "new_links"
  FOR EACH STATEMENT EXECUTE FUNCTION "prompt_tools_names"();--> statement-breakpoint
CREATE TRIGGER "prompt_tools_names_delete" AFTER DELETE ON "prompt_tools"
  REFERENCING OLD TABLE AS "old_links"
  FOR EACH STATEMENT EXECUTE FUNCTION "prompt_tools_names"();--> statement-breakpoint
CREATE TRIGGER "prompt_tools_names_update" AFTER UPDATE ON "prompt_tools"
  REFERENCING OLD TABLE AS "old_links" NEW TABLE AS "new_links"
  FOR EACH STATEMENT EXECUTE FUNCTION "prompt_tools_names"();--> statement-breakpoint
CREATE FUNCTION "tools_names"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "refresh_prompt_tool_names"(
    ARRAY(SELECT "prompt_id" FROM "prompt_tools" WHERE "tool_id" = NEW."id"));
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "tools_names" AFTER UPDATE OF "name", "organization_id" ON "tools"
  FOR EACH ROW
  WHEN (OLD."name" IS DISTINCT FROM NEW."name"
    OR OLD."organization_id" IS DISTINCT FROM NEW."organization_id")
  EXECUTE FUNCTION "tools_names"();--> statement-breakpoint
-- The links stored before this migration.
SELECT "refresh_prompt_tool_names"(ARRAY(SELECT DISTINCT "prompt_id" FROM "prompt_tools"));
