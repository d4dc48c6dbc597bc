ALTER TABLE `prompts` ADD `tool_names` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `prompts_organization_tool_names_idx` ON `prompts` (`organization_id`,`tool_names`,`id`);--> statement-breakpoint
-- A prompt's tool names are those of its linked tools of its own organization, joined by `,` in
-- tool id order, whoever writes the links or renames a tool (the records loader, an operator's
-- fix). A link removed with its tool or prompt goes through prompt_tools' delete trigger.
-- SQLite has no stored functions: each trigger spells out the same join.
CREATE TRIGGER `prompt_tools_names_insert` AFTER INSERT ON `prompt_tools`
BEGIN
  UPDATE `prompts` SET tool_names = coalesce((SELECT group_concat(t.name, ',' ORDER BY t.id)
    FROM `prompt_tools` pt JOIN `tools` t ON t.id = pt.tool_id
    WHERE pt.prompt_id = `prompts`.id AND +t.organization_id = `prompts`.organization_id), '')
  WHERE id = new.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_tools_names_delete` AFTER DELETE ON `prompt_tools`
BEGIN
  UPDATE `prompts` SET tool_names = coalesce((SELECT group_concat(t.name, ',' ORDER BY t.id)
    FROM `prompt_tools` pt JOIN `tools` t ON t.id = pt.tool_id
    WHERE pt.prompt_id = `prompts`.id AND +t.organization_id = `prompts`.organization_id), '')
  WHERE id = old.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_tools_names_update` AFTER UPDATE ON `prompt_tools`
BEGIN
  UPDATE `prompts` SET tool_names = coalesce((SELECT group_concat(t.name, ',' ORDER BY t.id)
    FROM `prompt_tools` pt JOIN `tools` t ON t.id = pt.tool_id
    WHERE pt.prompt_id = `prompts`.id AND +t.organization_id = `prompts`.organization_id), '')
  WHERE id IN (old.prompt_id, new.prompt_id);
END;--> statement-breakpoint
CREATE TRIGGER `tools_names_update` AFTER UPDATE OF name, organization_id ON `tools`
WHEN old.name IS NOT new.name OR old.organization_id IS NOT new.organization_id
BEGIN
  UPDATE `prompts` SET tool_names = coalesce((SELECT group_concat(t.name, ',' ORDER BY t.id)
    FROM `prompt_tools` pt JOIN `tools` t ON t.id = pt.tool_id
    WHERE pt.prompt_id = `prompts`.id AND +t.organization_id = `prompts`.organization_id), '')
  WHERE id IN (SELECT prompt_id FROM `prompt_tools` WHERE tool_id = new.id);
END;--> statement-breakpoint
-- The links stored before this migration.
UPDATE `prompts` SET tool_names = coalesce((SELECT group_concat(t.name, ',' ORDER BY t.id)
  FROM `prompt_tools` pt JOIN `tools` t ON t.id = pt.tool_id
  WHERE pt.prompt_id = `prompts`.id AND +t.organization_id = `prompts`.organization_id), '');
