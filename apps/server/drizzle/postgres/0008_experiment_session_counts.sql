CREATE TABLE "experiment_session_counts" (
	"experiment_id" integer NOT NULL,
	"slot_start" text COLLATE "C" NOT NULL,
	"variant_id" integer NOT NULL,
	"writer" integer NOT NULL,
	"session_count" integer NOT NULL,
	CONSTRAINT "experiment_session_counts_experiment_id_slot_start_variant_id_writer_pk" PRIMARY KEY("experiment_id","slot_start","variant_id","writer")
);
--> statement-breakpoint
-- Each session counts once in its experiment's quarter hour, whoever writes it: routing inserts
-- sessions and never changes them, and updates and deletes keep the counts right for anything
-- else that does (an operator's fix, a test). created_at is ISO 8601 UTC text
-- (YYYY-MM-DDTHH:MM:SS.sssZ); its quarter hour is the text up to the hour and the minutes rounded
-- down to 00, 15, 30 or 45. Each backend process counts in rows of its own (writer): two
-- transactions that run at once are on two backends, so they never update one row, and
-- SERIALIZABLE routing neither waits nor fails on it. A row may so go below zero (a session
-- deleted by another backend than the one that counted it); the sum over writers is the count.
CREATE FUNCTION "experiment_session_count_add"(session "sessions", delta integer)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO "experiment_session_counts"
    ("experiment_id", "slot_start", "variant_id", "writer", "session_count")
  SELECT session."experiment_id",
    substr(session."created_at", 1, 14)
      || lpad((substr(session."created_at", 15, 2)::integer / 15 * 15)::text, 2, '0')
      || ':00.000Z',
    session."variant_id", pg_backend_pid(), delta
  WHERE session."experiment_id" IS NOT NULL AND session."variant_id" IS NOT NULL
  ON CONFLICT ("experiment_id", "slot_start", "variant_id", "writer")
    DO UPDATE SET "session_count" = "experiment_session_counts"."session_count" + delta
$$;--> statement-breakpoint
CREATE FUNCTION "sessions_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM "experiment_session_count_add"(OLD, -1);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM "experiment_session_count_add"(NEW, 1);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "sessions_count_insert" AFTER INSERT ON "sessions"
  FOR EACH ROW WHEN (NEW."experiment_id" IS NOT NULL)
  EXECUTE FUNCTION "sessions_count"();--> statement-breakpoint
CREATE TRIGGER "sessions_count_change"
  AFTER UPDATE OF "experiment_id", "variant_id", "created_at" OR DELETE ON "sessions"
  FOR EACH ROW EXECUTE FUNCTION "sessions_count"();--> statement-breakpoint
-- The sessions stored before this migration.
INSERT INTO "experiment_session_counts"
  ("experiment_id", "slot_start", "variant_id", "writer", "session_count")
SELECT "experiment_id",
  substr("created_at", 1, 14)
    || lpad((substr("created_at", 15, 2)::integer / 15 * 15)::text, 2, '0') || ':00.000Z',
  "variant_id", 0, count(*)
FROM "sessions"
WHERE "experiment_id" IS NOT NULL AND "variant_id" IS NOT NULL
GROUP BY 1, 2, 3;
