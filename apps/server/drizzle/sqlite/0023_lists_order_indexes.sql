CREATE INDEX `experiments_organization_name_idx` ON `experiments` (`organization_id`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_status_idx` ON `experiments` (`organization_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_target_idx` ON `experiments` (`organization_id`,`target_id`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_created_at_idx` ON `experiments` (`organization_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_updated_at_idx` ON `experiments` (`organization_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_started_at_idx` ON `experiments` (`organization_id`,`started_at`,`id`);--> statement-breakpoint
CREATE INDEX `experiments_organization_stopped_at_idx` ON `experiments` (`organization_id`,`stopped_at`,`id`);--> statement-breakpoint
CREATE INDEX `prompts_organization_llm_config_idx` ON `prompts` (`organization_id`,`llm_config`,`id`);--> statement-breakpoint
CREATE INDEX `prompts_organization_last_updated_idx` ON `prompts` (`organization_id`,`last_updated`,`id`);--> statement-breakpoint
CREATE INDEX `prompts_organization_last_updated_by_idx` ON `prompts` (`organization_id`,`last_updated_by`,`id`);--> statement-breakpoint
CREATE INDEX `prompts_organization_session_end_idx` ON `prompts` (`organization_id`,`session_end_enabled`,`id`);