CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`endpoint_id` integer NOT NULL,
	`organization_id` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`type` text NOT NULL,
	`position` text,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`response_status` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`attempted_at` text NOT NULL,
	`next_attempt_at` text,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "webhook_attempts_status_check" CHECK("webhook_attempts"."status" IN ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_endpoint_idx` ON `webhook_attempts` (`endpoint_id`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_attempts_attempted_at_idx` ON `webhook_attempts` (`attempted_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT true NOT NULL,
	`disabled_reason` text,
	`search_fields` text NOT NULL,
	`search_field_values` text NOT NULL,
	`message_types` text NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` text,
	`event_position` integer NOT NULL,
	`history_position` integer NOT NULL,
	`lease_owner` text,
	`lease_expires_at` text,
	`failing_since` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_organization_idx` ON `webhook_endpoints` (`organization_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`endpoint_id` integer NOT NULL,
	`organization_id` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`type` text NOT NULL,
	`position` text,
	`payload` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`next_attempt_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "webhook_messages_status_check" CHECK("webhook_messages"."status" IN ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE INDEX `webhook_messages_due_idx` ON `webhook_messages` (`endpoint_id`,`next_attempt_at`) WHERE status = 'pending';