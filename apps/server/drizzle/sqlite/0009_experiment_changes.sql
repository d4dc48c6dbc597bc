CREATE TABLE `experiment_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`experiment_id` integer NOT NULL,
	`occurred_at` text NOT NULL,
	`action` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_key_id` text,
	`actor_key_name` text,
	`request_id` text,
	`changes` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `experiment_changes_experiment_idx` ON `experiment_changes` (`organization_id`,`experiment_id`,`id`);