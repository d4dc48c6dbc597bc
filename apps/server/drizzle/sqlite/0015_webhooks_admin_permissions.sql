-- The admin roles get the webhook permissions, so an organization's administrators can use
-- webhooks without an operator editing their role: roles named `admin` (what `agentline demo`
-- creates) and roles that hold every permission there was before (`agentline role create --all`).
UPDATE `roles` SET `permissions` = json_insert(`permissions`, '$[#]', 'WEBHOOKS_READ')
WHERE (`name` = 'admin' OR (SELECT count(DISTINCT `value`) FROM json_each(`roles`.`permissions`)
    WHERE `value` IN ('EVENTS_READ', 'PROMPTS_READ', 'CHANNELS_READ', 'CHANNELS_WRITE', 'CHANNELS_DELETE', 'SESSIONS_WRITE')) = 6)
  AND NOT EXISTS (SELECT 1 FROM json_each(`roles`.`permissions`) WHERE `value` = 'WEBHOOKS_READ');--> statement-breakpoint
UPDATE `roles` SET `permissions` = json_insert(`permissions`, '$[#]', 'WEBHOOKS_WRITE')
WHERE (`name` = 'admin' OR (SELECT count(DISTINCT `value`) FROM json_each(`roles`.`permissions`)
    WHERE `value` IN ('EVENTS_READ', 'PROMPTS_READ', 'CHANNELS_READ', 'CHANNELS_WRITE', 'CHANNELS_DELETE', 'SESSIONS_WRITE')) = 6)
  AND NOT EXISTS (SELECT 1 FROM json_each(`roles`.`permissions`) WHERE `value` = 'WEBHOOKS_WRITE');
