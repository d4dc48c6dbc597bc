-- The admin roles get the webhook permissions, so an organization's administrators can use
-- webhooks without an operator editing their role: roles named `admin` (what `agentline demo`
-- creates) and roles that hold every permission there was before (`agentline role create --all`).
UPDATE "roles" SET "permissions" = ("permissions"::jsonb || '["WEBHOOKS_READ"]'::jsonb)::json
WHERE ("name" = 'admin' OR "permissions"::jsonb @> '["EVENTS_READ", "PROMPTS_READ", "CHANNELS_READ", "CHANNELS_WRITE", "CHANNELS_DELETE", "SESSIONS_WRITE"]'::jsonb)
  AND NOT "permissions"::jsonb @> '["WEBHOOKS_READ"]'::jsonb;--> statement-breakpoint
UPDATE "roles" SET "permissions" = ("permissions"::jsonb || '["WEBHOOKS_WRITE"]'::jsonb)::json
WHERE ("name" = 'admin' OR "permissions"::jsonb @> '["EVENTS_READ", "PROMPTS_READ", "CHANNELS_READ", "CHANNELS_WRITE", "CHANNELS_DELETE", "SESSIONS_WRITE"]'::jsonb)
  AND NOT "permissions"::jsonb @> '["WEBHOOKS_WRITE"]'::jsonb;
