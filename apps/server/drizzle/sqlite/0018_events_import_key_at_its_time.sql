-- An imported event is its import key at its time, as on PostgreSQL, whose time partitions
-- require the timestamp in every unique index (postgres migration 0014).
DROP INDEX `events_organization_import_key_unique`;--> statement-breakpoint
CREATE UNIQUE INDEX `events_organization_import_key_unique` ON `events` (`organization_id`,`import_key`,`timestamp`) WHERE import_key IS NOT NULL;