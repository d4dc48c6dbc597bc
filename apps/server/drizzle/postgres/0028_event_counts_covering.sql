-- The hour counts' key carries each row's count (INCLUDE, written here by hand: drizzle-kit
-- cannot say it), so a list's read of an organization's hours is an index-only scan, as SQLite's
-- WITHOUT ROWID table (its migration 0017) reads them. The rows of one organization's hours lie
-- on as many table pages as there are hours, written one batch at a time among every other
-- organization's; in the key they lie side by side (docs/benchmarks.md, Figures behind the code).
-- The key's columns are unchanged, so the counting trigger's upsert (migration 0013) still finds
-- its rows by it. An update of a count is no longer HOT, since the count is in the index: one
-- index entry more per counted row, which btree's bottom-up deletion clears as the versions die.
ALTER TABLE "event_counts" DROP CONSTRAINT "event_counts_organization_id_property_value_hour_pk";--> statement-breakpoint
ALTER TABLE "event_counts" ADD CONSTRAINT "event_counts_organization_id_property_value_hour_pk" PRIMARY KEY ("organization_id","property","value","hour") INCLUDE ("event_count");
