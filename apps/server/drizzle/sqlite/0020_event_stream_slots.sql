CREATE TABLE `event_stream_slots` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `event_stream_slots_api_key_idx` ON `event_stream_slots` (`api_key_id`);