ALTER TABLE `prompts` ADD `agent_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `prompts_organization_agent_count_idx` ON `prompts` (`organization_id`,`agent_count`,`id`);--> statement-breakpoint
-- A prompt counts the agents of its own organization that name it, whoever writes them (the
-- records loader, an operator's fix). An update that moves no agent changes no count.
CREATE TRIGGER `agents_count_insert` AFTER INSERT ON `agents`
BEGIN
  UPDATE `prompts` SET agent_count = agent_count + 1
  WHERE id = new.prompt_id AND organization_id = new.organization_id;
END;--> statement-breakpoint
CREATE TRIGGER `agents_count_delete` AFTER DELETE ON `agents`
BEGIN
  UPDATE `prompts` SET agent_count = agent_count - 1
  WHERE id = old.prompt_id AND organization_id = old.organization_id;
END;--> statement-breakpoint
CREATE TRIGGER `agents_count_update` AFTER UPDATE OF prompt_id, organization_id ON `agents`
WHEN old.prompt_id IS NOT new.prompt_id OR old.organization_id IS NOT new.organization_id
BEGIN
  UPDATE `prompts` SET agent_count = agent_count - 1
  WHERE id = old.prompt_id AND organization_id = old.organization_id;
  UPDATE `prompts` SET agent_count = agent_count + 1
  WHERE id = new.prompt_id AND organization_id = new.organization_id;
END;--> statement-breakpoint
-- The agents stored before this migration.
UPDATE `prompts` SET agent_count = (SELECT count(*) FROM `agents` a
  WHERE a.prompt_id = `prompts`.id AND a.organization_id = `prompts`.organization_id);
