DROP INDEX `agents_prompt_idx`;--> statement-breakpoint
CREATE INDEX `agents_prompt_idx` ON `agents` (`prompt_id`,`organization_id`);--> statement-breakpoint
DROP INDEX `prompt_tools_tool_idx`;--> statement-breakpoint
CREATE INDEX `prompt_tools_tool_idx` ON `prompt_tools` (`tool_id`,`prompt_id`);--> statement-breakpoint
CREATE INDEX `prompts_organization_idx` ON `prompts` (`organization_id`,`id`);