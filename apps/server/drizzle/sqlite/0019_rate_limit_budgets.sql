CREATE TABLE `rate_limit_budgets` (
	`api_key_id` text PRIMARY KEY NOT NULL,
	`tokens` real NOT NULL,
	`refilled_at` integer NOT NULL,
	`last_lease` integer NOT NULL
);
