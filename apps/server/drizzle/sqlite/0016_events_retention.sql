-- Retention: a per-organization window (NULL: the server's EVENT_RETENTION_DAYS) and what the
-- sweep removed so far, which kept answers, counts and stream positions are checked against.
ALTER TABLE `organizations` ADD `event_retention_days` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `events_removed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `organizations` ADD `events_removed_through` integer DEFAULT 0 NOT NULL;