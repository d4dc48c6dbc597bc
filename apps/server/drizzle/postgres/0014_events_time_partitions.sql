-- Events in monthly time partitions (range of "timestamp" text, 'YYYY-MM' bounds), so retention
-- drops a month whole instead of deleting it row by row (db/repositories/event-partitions.ts
-- creates the months ahead and drops the expired ones). The table as it stands becomes the first
-- partition, "events_history", holding everything before the month after both today and its
-- latest event: its rows are not copied, rewritten or renumbered, only given the new table as a
-- parent. Beside it, "events_default" takes what no month holds yet (events dated beyond the
-- months made ahead); a month made later moves its rows out of it.
--
-- Every unique index of a partitioned table holds the partition key: the key becomes
-- (id, timestamp), ids still drawn from the one sequence, and an imported event is its key at its
-- time (the SQLite index says the same, migration 0018).
LOCK TABLE "events" IN ACCESS EXCLUSIVE MODE;--> statement-breakpoint
-- What the new parent holds for all its partitions: triggers (a partition may not keep triggers
-- with transition tables), the foreign key, the keys.
DROP TRIGGER "events_write_turn" ON "events";--> statement-breakpoint
DROP TRIGGER "events_count_insert" ON "events";--> statement-breakpoint
DROP TRIGGER "events_count_delete" ON "events";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_organization_id_organizations_id_fk";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
DROP INDEX "events_organization_import_key_unique";--> statement-breakpoint
ALTER TABLE "events" RENAME TO "events_history";--> statement-breakpoint
-- The indexes that stay are attached to the parent's, which take their names.
ALTER INDEX "events_organization_timestamp_idx" RENAME TO "events_history_organization_timestamp_idx";--> statement-breakpoint
ALTER INDEX "events_organization_id_idx" RENAME TO "events_history_organization_id_idx";--> statement-breakpoint
ALTER INDEX "events_organization_session_idx" RENAME TO "events_history_organization_session_idx";--> statement-breakpoint
ALTER INDEX "events_organization_conversation_idx" RENAME TO "events_history_organization_conversation_idx";--> statement-breakpoint
ALTER INDEX "events_organization_user_idx" RENAME TO "events_history_organization_user_idx";--> statement-breakpoint
ALTER INDEX "events_organization_category_idx" RENAME TO "events_history_organization_category_idx";--> statement-breakpoint
ALTER INDEX "events_organization_type_idx" RENAME TO "events_history_organization_type_idx";--> statement-breakpoint
ALTER INDEX "events_description_trgm_idx" RENAME TO "events_history_description_trgm_idx";--> statement-breakpoint
CREATE TABLE "events" (LIKE "events_history" INCLUDING DEFAULTS) PARTITION BY RANGE ("timestamp");--> statement-breakpoint
-- The sequence belongs to the parent: dropping the history partition must not drop it.
ALTER SEQUENCE "events_id_seq" OWNED BY "events"."id";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_id_timestamp_pk" PRIMARY KEY("id","timestamp");--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_organization_import_key_unique" ON "events" USING btree ("organization_id","import_key","timestamp") WHERE import_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_organization_timestamp_idx" ON "events" USING btree ("organization_id","timestamp","id");--> statement-breakpoint
CREATE INDEX "events_organization_id_idx" ON "events" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "events_organization_session_idx" ON "events" USING btree ("organization_id","session_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_conversation_idx" ON "events" USING btree ("organization_id","conversation_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_user_idx" ON "events" USING btree ("organization_id","user_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_category_idx" ON "events" USING btree ("organization_id","category" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_type_idx" ON "events" USING btree ("organization_id","type" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_description_trgm_idx" ON "events" USING gin ("description" gin_trgm_ops);--> statement-breakpoint
CREATE TRIGGER "events_write_turn" BEFORE INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "events_take_write_turn"();--> statement-breakpoint
CREATE TRIGGER "events_count_insert" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "events_count"();--> statement-breakpoint
CREATE TRIGGER "events_count_delete" AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "events_count"();--> statement-breakpoint
-- Attaching checks every row against the bound in one scan, finds the indexes above on the table
-- and adopts them, and builds the two unique ones.
DO $$
DECLARE
  latest text := (SELECT max("timestamp") FROM "events_history");
  next_month text := to_char(
    date_trunc('month', greatest(now() AT TIME ZONE 'UTC',
      coalesce(to_date(left(latest, 7), 'YYYY-MM'), now() AT TIME ZONE 'UTC'))) + interval '1 month',
    'YYYY-MM');
BEGIN
  EXECUTE format(
    'ALTER TABLE "events" ATTACH PARTITION "events_history" FOR VALUES FROM (MINVALUE) TO (%L)',
    next_month);
END
$$;--> statement-breakpoint
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
