-- Event writers take turns per organization instead of across the whole database: the trigger
-- takes the organization's advisory lock, then assigns the id from the sequence, so each
-- organization's events commit in id order (what its cached counts rely on) and no write path
-- can forget to take the turn. The column default only serves inserts that name no id; the
-- trigger replaces its value.
ALTER TABLE "events" ALTER COLUMN "id" DROP IDENTITY;--> statement-breakpoint
CREATE SEQUENCE "events_id_seq" AS bigint OWNED BY "events"."id";--> statement-breakpoint
SELECT setval('events_id_seq', coalesce((SELECT max("id") FROM "events"), 0) + 1, false);--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "id" SET DEFAULT nextval('events_id_seq');--> statement-breakpoint
CREATE INDEX "events_organization_id_idx" ON "events" USING btree ("organization_id","id");--> statement-breakpoint
CREATE FUNCTION "events_take_write_turn"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1634167909, NEW.organization_id);
  NEW.id := nextval('events_id_seq');
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "events_write_turn" BEFORE INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "events_take_write_turn"();
