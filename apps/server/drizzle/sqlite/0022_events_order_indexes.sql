CREATE INDEX `events_organization_source_idx` ON `events` (`organization_id`,`source`);--> statement-breakpoint
CREATE INDEX `events_organization_source_id_idx` ON `events` (`organization_id`,`source_id`);--> statement-breakpoint
CREATE INDEX `events_organization_description_idx` ON `events` (`organization_id`,`description`);--> statement-breakpoint
CREATE INDEX `events_organization_attributes_idx` ON `events` (`organization_id`,`attributes`);