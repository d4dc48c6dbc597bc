ALTER TABLE `experiments` ADD `end_at` text;--> statement-breakpoint
ALTER TABLE `experiments` ADD `max_sessions` integer;--> statement-breakpoint
ALTER TABLE `experiments` ADD `ended_reason` text;--> statement-breakpoint
ALTER TABLE `experiments` ADD `routed_sessions` integer DEFAULT 0 NOT NULL;