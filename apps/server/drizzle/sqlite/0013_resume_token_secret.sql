CREATE TABLE `resume_token_secret` (
	`id` integer PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`decimal_through` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	CONSTRAINT "resume_token_secret_one_row" CHECK("resume_token_secret"."id" = 1)
);
