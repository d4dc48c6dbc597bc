-- Retention: a per-organization window (NULL: the server's EVENT_RETENTION_DAYS) and what the
-- sweep removed so far, which kept answers, counts and stream positions are checked against.
ALTER TABLE "organizations" ADD COLUMN "event_retention_days" integer;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "events_removed" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "events_removed_through" bigint DEFAULT 0 NOT NULL;