ALTER TABLE `experiments` ADD `control_agent_id` integer;--> statement-breakpoint
CREATE INDEX `experiments_organization_control_agent_idx` ON `experiments` (`organization_id`,`control_agent_id`,`id`);--> statement-breakpoint
-- The experiments stored before this migration.
UPDATE `experiments` SET `control_agent_id` = (SELECT `agent_id` FROM `experiment_variants` v
  WHERE v.`experiment_id` = `experiments`.`id` AND v.`is_control` = 1);
