DROP INDEX `events_organization_category_type_idx`;--> statement-breakpoint
CREATE INDEX `events_organization_category_idx` ON `events` (`organization_id`,`category`);--> statement-breakpoint
CREATE INDEX `events_organization_type_idx` ON `events` (`organization_id`,`type`);