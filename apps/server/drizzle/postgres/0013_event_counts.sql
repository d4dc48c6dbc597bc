CREATE TABLE "event_counts" (
	"organization_id" integer NOT NULL,
	"property" text COLLATE "C" NOT NULL,
	"value" text COLLATE "C" NOT NULL,
	"hour" text COLLATE "C" NOT NULL,
	"event_count" integer NOT NULL,
	CONSTRAINT "event_counts_organization_id_property_value_hour_pk" PRIMARY KEY("organization_id","property","value","hour")
);
--> statement-breakpoint
-- Every event counts once in its hour, in the all-events row ('', '') and in the row of each of
-- its category, type and source, whoever writes or removes it (routing, an import, retention's
-- sweep, an operator's fix). Events are never updated. timestamp is ISO 8601 UTC text
-- (YYYY-MM-DDTHH:MM:SS.sssZ), so its hour is its first 13 characters. A statement's events are
-- counted together, one upsert per row of counts. An organization's rows change only in its
-- write turn (migration 0003's lock, which inserts take before their first row): a removal takes
-- it too, before its counts, so an import of old events beside the sweep of those hours waits
-- for it instead of deadlocking on the rows both change. An hour's row that reaches zero goes.
CREATE FUNCTION "events_count"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sign integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
  emptied "event_counts"[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_advisory_xact_lock(1634167909, o."organization_id")
    FROM (SELECT DISTINCT "organization_id" FROM "changed" ORDER BY 1) o;
  END IF;
  WITH "counted" AS (
    INSERT INTO "event_counts" ("organization_id", "property", "value", "hour", "event_count")
    SELECT e."organization_id", p."property", p."value", left(e."timestamp", 13),
      sign * count(*)
    FROM "changed" e
    CROSS JOIN LATERAL (VALUES ('', ''), ('category', e."category"), ('type', e."type"),
      ('source', e."source")) AS p("property", "value")
    WHERE p."value" IS NOT NULL
    GROUP BY 1, 2, 3, 4
    ON CONFLICT ("organization_id", "property", "value", "hour")
      DO UPDATE SET "event_count" = "event_counts"."event_count" + excluded."event_count"
    RETURNING "event_counts".*
  )
  SELECT array_agg(ROW(c.*)::"event_counts") INTO emptied FROM "counted" c
  WHERE c."event_count" = 0;
  -- A separate statement: within the upsert's, the rows it changed cannot be deleted.
  IF emptied IS NOT NULL THEN
    DELETE FROM "event_counts" c USING unnest(emptied) z
    WHERE c."organization_id" = z."organization_id" AND c."property" = z."property"
      AND c."value" = z."value" AND c."hour" = z."hour" AND c."event_count" = 0;
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "events_count_insert" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "events_count"();--> statement-breakpoint
CREATE TRIGGER "events_count_delete" AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "events_count"();--> statement-breakpoint
-- The events stored before this migration.
INSERT INTO "event_counts" ("organization_id", "property", "value", "hour", "event_count")
SELECT e."organization_id", p."property", p."value", left(e."timestamp", 13), count(*)
FROM "events" e
CROSS JOIN LATERAL (VALUES ('', ''), ('category', e."category"), ('type', e."type"),
  ('source', e."source")) AS p("property", "value")
WHERE p."value" IS NOT NULL
GROUP BY 1, 2, 3, 4;
