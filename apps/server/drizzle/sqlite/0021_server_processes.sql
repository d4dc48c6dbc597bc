CREATE TABLE `server_processes` (
	`id` text PRIMARY KEY NOT NULL,
	`seen_at` integer NOT NULL
);
