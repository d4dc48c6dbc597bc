CREATE TABLE `cursor_secrets` (
	`id` integer PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
