CREATE TABLE `idempotency_keys` (
	`api_key_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`status` integer,
	`body` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`api_key_id`, `key`)
);
