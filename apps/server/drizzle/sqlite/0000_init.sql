CREATE TABLE `a2p_brands` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`sid` text NOT NULL,
	`status` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `a2p_brands_organization_sid_unique` ON `a2p_brands` (`organization_id`,`sid`);--> statement-breakpoint
CREATE TABLE `a2p_campaigns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`sid` text NOT NULL,
	`messaging_service_id` integer NOT NULL,
	`brand_id` integer NOT NULL,
	`campaign_status` text NOT NULL,
	`is_mock` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`messaging_service_id`) REFERENCES `messaging_services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`brand_id`) REFERENCES `a2p_brands`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `a2p_campaigns_messaging_service_idx` ON `a2p_campaigns` (`messaging_service_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `a2p_campaigns_organization_sid_unique` ON `a2p_campaigns` (`organization_id`,`sid`);--> statement-breakpoint
CREATE TABLE `agents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`prompt_id` integer,
	`pinned_prompt_version` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_id`) REFERENCES `prompts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `agents_organization_name_idx` ON `agents` (`organization_id`,`name`);--> statement-breakpoint
CREATE INDEX `agents_prompt_idx` ON `agents` (`prompt_id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key_id` text NOT NULL,
	`organization_id` integer NOT NULL,
	`role_id` integer NOT NULL,
	`name` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`revoked_at` text,
	`last_used_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_id_unique` ON `api_keys` (`key_id`);--> statement-breakpoint
CREATE INDEX `api_keys_organization_idx` ON `api_keys` (`organization_id`);--> statement-breakpoint
CREATE TABLE `channel_targets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`target` text NOT NULL,
	`target_mode` text NOT NULL,
	`agent_id` integer,
	`is_agent_test` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `channel_targets_channel_idx` ON `channel_targets` (`channel_id`,`target`);--> statement-breakpoint
CREATE TABLE `channels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`provider` text,
	`provider_config` text,
	`provider_secret` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "channels_kind_check" CHECK("channels"."kind" IN ('telephony', 'sms', 'web_chat')),
	CONSTRAINT "channels_provider_check" CHECK("channels"."provider" IS NULL OR ("channels"."kind" = 'telephony' AND "channels"."provider" IN ('records', 'twilio')))
);
--> statement-breakpoint
CREATE INDEX `channels_organization_name_idx` ON `channels` (`organization_id`,`name`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`import_key` text,
	`timestamp` text NOT NULL,
	`session_id` text,
	`conversation_id` text,
	`source` text,
	`source_id` text,
	`category` text,
	`type` text,
	`user_id` text,
	`description` text,
	`attributes` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `events_organization_timestamp_idx` ON `events` (`organization_id`,`timestamp`,`id`);--> statement-breakpoint
CREATE INDEX `events_organization_session_idx` ON `events` (`organization_id`,`session_id`);--> statement-breakpoint
CREATE INDEX `events_organization_conversation_idx` ON `events` (`organization_id`,`conversation_id`);--> statement-breakpoint
CREATE INDEX `events_organization_user_idx` ON `events` (`organization_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `events_organization_category_type_idx` ON `events` (`organization_id`,`category`,`type`);--> statement-breakpoint
CREATE UNIQUE INDEX `events_organization_import_key_unique` ON `events` (`organization_id`,`import_key`);--> statement-breakpoint
CREATE TABLE `experiment_variants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`experiment_id` integer NOT NULL,
	`position` integer NOT NULL,
	`name` text NOT NULL,
	`weight` integer NOT NULL,
	`is_control` integer NOT NULL,
	`agent_id` integer NOT NULL,
	FOREIGN KEY (`experiment_id`) REFERENCES `experiments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `experiment_variants_experiment_idx` ON `experiment_variants` (`experiment_id`,`position`);--> statement-breakpoint
CREATE TABLE `experiments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`target_id` integer NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`stopped_at` text,
	`last_updated_by` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`target_id`) REFERENCES `channel_targets`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "experiments_status_check" CHECK("experiments"."status" IN ('draft', 'running', 'stopped'))
);
--> statement-breakpoint
CREATE INDEX `experiments_organization_idx` ON `experiments` (`organization_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `experiments_one_running_per_target` ON `experiments` (`target_id`) WHERE status = 'running';--> statement-breakpoint
CREATE TABLE `messaging_service_numbers` (
	`messaging_service_id` integer NOT NULL,
	`organization_id` integer NOT NULL,
	`phone_number` text NOT NULL,
	PRIMARY KEY(`messaging_service_id`, `phone_number`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`messaging_service_id`,`organization_id`) REFERENCES `messaging_services`(`id`,`organization_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messaging_service_numbers_organization_phone_unique` ON `messaging_service_numbers` (`organization_id`,`phone_number`);--> statement-breakpoint
CREATE TABLE `messaging_services` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`sid` text NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messaging_services_organization_sid_unique` ON `messaging_services` (`organization_id`,`sid`);--> statement-breakpoint
CREATE UNIQUE INDEX `messaging_services_id_organization_unique` ON `messaging_services` (`id`,`organization_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_name_unique` ON `organizations` (`name`);--> statement-breakpoint
CREATE TABLE `prompt_tools` (
	`prompt_id` integer NOT NULL,
	`tool_id` integer NOT NULL,
	PRIMARY KEY(`prompt_id`, `tool_id`),
	FOREIGN KEY (`prompt_id`) REFERENCES `prompts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tool_id`) REFERENCES `tools`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `prompt_tools_tool_idx` ON `prompt_tools` (`tool_id`);--> statement-breakpoint
CREATE TABLE `prompts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`description` text,
	`context` text,
	`llm_config` text NOT NULL,
	`session_end_enabled` integer DEFAULT false NOT NULL,
	`session_end_tool_id` integer,
	`version_number` integer DEFAULT 1 NOT NULL,
	`edit_comments` text,
	`last_updated` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`last_updated_by` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`session_end_tool_id`) REFERENCES `tools`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `prompts_organization_name_idx` ON `prompts` (`organization_id`,`name`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`permissions` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_organization_name_unique` ON `roles` (`organization_id`,`name`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`experiment_id` integer,
	`variant_id` integer,
	`user_id` text,
	`conversation_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`target_id`) REFERENCES `channel_targets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sessions_experiment_variant_idx` ON `sessions` (`experiment_id`,`variant_id`);--> statement-breakpoint
CREATE TABLE `telephony_numbers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`phone_number` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `telephony_numbers_channel_phone_unique` ON `telephony_numbers` (`channel_id`,`phone_number`);--> statement-breakpoint
CREATE TABLE `tools` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`service_id` integer,
	`name` text NOT NULL,
	`version_number` integer DEFAULT 1 NOT NULL,
	`definition` text NOT NULL,
	`last_updated` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`last_updated_by` text NOT NULL,
	`last_updated_comments` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `tools_organization_name_idx` ON `tools` (`organization_id`,`name`);