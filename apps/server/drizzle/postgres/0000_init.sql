CREATE TABLE "a2p_brands" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "a2p_brands_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"sid" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	CONSTRAINT "a2p_brands_organization_sid_unique" UNIQUE("organization_id","sid")
);
--> statement-breakpoint
CREATE TABLE "a2p_campaigns" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "a2p_campaigns_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"sid" text COLLATE "C" NOT NULL,
	"messaging_service_id" integer NOT NULL,
	"brand_id" integer NOT NULL,
	"campaign_status" text COLLATE "C" NOT NULL,
	"is_mock" boolean DEFAULT false NOT NULL,
	CONSTRAINT "a2p_campaigns_organization_sid_unique" UNIQUE("organization_id","sid")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agents_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"prompt_id" integer,
	"pinned_prompt_version" integer
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"key_id" text COLLATE "C" NOT NULL,
	"organization_id" integer NOT NULL,
	"role_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"secret_hash" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"revoked_at" text COLLATE "C",
	"last_used_at" text COLLATE "C",
	CONSTRAINT "api_keys_key_id_unique" UNIQUE("key_id")
);
--> statement-breakpoint
CREATE TABLE "channel_targets" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "channel_targets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"channel_id" integer NOT NULL,
	"target" text COLLATE "C" NOT NULL,
	"target_mode" text COLLATE "C" NOT NULL,
	"agent_id" integer,
	"is_agent_test" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "channels" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "channels_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"kind" text COLLATE "C" NOT NULL,
	"provider" text COLLATE "C",
	"provider_config" json,
	"provider_secret" text COLLATE "C",
	CONSTRAINT "channels_kind_check" CHECK ("channels"."kind" IN ('telephony', 'sms', 'web_chat')),
	CONSTRAINT "channels_provider_check" CHECK ("channels"."provider" IS NULL OR ("channels"."kind" = 'telephony' AND "channels"."provider" IN ('records', 'twilio')))
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"import_key" text COLLATE "C",
	"timestamp" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C",
	"conversation_id" text COLLATE "C",
	"source" text COLLATE "C",
	"source_id" text COLLATE "C",
	"category" text COLLATE "C",
	"type" text COLLATE "C",
	"user_id" text COLLATE "C",
	"description" text COLLATE "C",
	"attributes" json
);
--> statement-breakpoint
CREATE TABLE "experiment_variants" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "experiment_variants_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"experiment_id" integer NOT NULL,
	"position" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"weight" integer NOT NULL,
	"is_control" boolean NOT NULL,
	"agent_id" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "experiments" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "experiments_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C",
	"target_id" integer NOT NULL,
	"status" text COLLATE "C" DEFAULT 'draft' NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"updated_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"started_at" text COLLATE "C",
	"stopped_at" text COLLATE "C",
	"last_updated_by" text COLLATE "C",
	CONSTRAINT "experiments_status_check" CHECK ("experiments"."status" IN ('draft', 'running', 'stopped'))
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"api_key_id" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"request_hash" text COLLATE "C" NOT NULL,
	"status" integer,
	"body" text COLLATE "C",
	"created_at" text COLLATE "C" NOT NULL,
	CONSTRAINT "idempotency_keys_api_key_id_key_pk" PRIMARY KEY("api_key_id","key")
);
--> statement-breakpoint
CREATE TABLE "messaging_service_numbers" (
	"messaging_service_id" integer NOT NULL,
	"organization_id" integer NOT NULL,
	"phone_number" text COLLATE "C" NOT NULL,
	CONSTRAINT "messaging_service_numbers_messaging_service_id_phone_number_pk" PRIMARY KEY("messaging_service_id","phone_number"),
	CONSTRAINT "messaging_service_numbers_organization_phone_unique" UNIQUE("organization_id","phone_number")
);
--> statement-breakpoint
CREATE TABLE "messaging_services" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "messaging_services_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"sid" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	CONSTRAINT "messaging_services_organization_sid_unique" UNIQUE("organization_id","sid"),
	CONSTRAINT "messaging_services_id_organization_unique" UNIQUE("id","organization_id")
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "organizations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"records_version" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "organizations_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "prompt_tools" (
	"prompt_id" integer NOT NULL,
	"tool_id" integer NOT NULL,
	CONSTRAINT "prompt_tools_prompt_id_tool_id_pk" PRIMARY KEY("prompt_id","tool_id")
);
--> statement-breakpoint
CREATE TABLE "prompts" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "prompts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C",
	"context" text COLLATE "C",
	"llm_config" json NOT NULL,
	"session_end_enabled" boolean DEFAULT false NOT NULL,
	"session_end_tool_id" integer,
	"version_number" integer DEFAULT 1 NOT NULL,
	"edit_comments" text COLLATE "C",
	"last_updated" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"last_updated_by" text COLLATE "C"
);
--> statement-breakpoint
CREATE TABLE "roles" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "roles_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"permissions" json NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	CONSTRAINT "roles_organization_name_unique" UNIQUE("organization_id","name")
);
--> statement-breakpoint
CREATE TABLE "services" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "services_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" integer NOT NULL,
	"target_id" integer NOT NULL,
	"agent_id" integer NOT NULL,
	"experiment_id" integer,
	"variant_id" integer,
	"user_id" text COLLATE "C",
	"conversation_id" text COLLATE "C",
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telephony_numbers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "telephony_numbers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"channel_id" integer NOT NULL,
	"phone_number" text COLLATE "C" NOT NULL,
	CONSTRAINT "telephony_numbers_channel_phone_unique" UNIQUE("channel_id","phone_number")
);
--> statement-breakpoint
CREATE TABLE "tools" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "tools_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"service_id" integer,
	"name" text COLLATE "C" NOT NULL,
	"version_number" integer DEFAULT 1 NOT NULL,
	"definition" json NOT NULL,
	"last_updated" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"last_updated_by" text COLLATE "C" NOT NULL,
	"last_updated_comments" text COLLATE "C"
);
--> statement-breakpoint
ALTER TABLE "a2p_brands" ADD CONSTRAINT "a2p_brands_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "a2p_campaigns" ADD CONSTRAINT "a2p_campaigns_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "a2p_campaigns" ADD CONSTRAINT "a2p_campaigns_messaging_service_id_messaging_services_id_fk" FOREIGN KEY ("messaging_service_id") REFERENCES "public"."messaging_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "a2p_campaigns" ADD CONSTRAINT "a2p_campaigns_brand_id_a2p_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."a2p_brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_targets" ADD CONSTRAINT "channel_targets_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_targets" ADD CONSTRAINT "channel_targets_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_targets" ADD CONSTRAINT "channel_targets_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channels" ADD CONSTRAINT "channels_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiment_variants" ADD CONSTRAINT "experiment_variants_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiment_variants" ADD CONSTRAINT "experiment_variants_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_target_id_channel_targets_id_fk" FOREIGN KEY ("target_id") REFERENCES "public"."channel_targets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messaging_service_numbers" ADD CONSTRAINT "messaging_service_numbers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messaging_service_numbers" ADD CONSTRAINT "messaging_service_numbers_service_fk" FOREIGN KEY ("messaging_service_id","organization_id") REFERENCES "public"."messaging_services"("id","organization_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messaging_services" ADD CONSTRAINT "messaging_services_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_tools" ADD CONSTRAINT "prompt_tools_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_tools" ADD CONSTRAINT "prompt_tools_tool_id_tools_id_fk" FOREIGN KEY ("tool_id") REFERENCES "public"."tools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompts" ADD CONSTRAINT "prompts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompts" ADD CONSTRAINT "prompts_session_end_tool_id_tools_id_fk" FOREIGN KEY ("session_end_tool_id") REFERENCES "public"."tools"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "roles" ADD CONSTRAINT "roles_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "services" ADD CONSTRAINT "services_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_target_id_channel_targets_id_fk" FOREIGN KEY ("target_id") REFERENCES "public"."channel_targets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telephony_numbers" ADD CONSTRAINT "telephony_numbers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telephony_numbers" ADD CONSTRAINT "telephony_numbers_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tools" ADD CONSTRAINT "tools_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tools" ADD CONSTRAINT "tools_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "a2p_campaigns_messaging_service_idx" ON "a2p_campaigns" USING btree ("messaging_service_id");--> statement-breakpoint
CREATE INDEX "agents_organization_name_idx" ON "agents" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "agents_prompt_idx" ON "agents" USING btree ("prompt_id","organization_id");--> statement-breakpoint
CREATE INDEX "api_keys_organization_idx" ON "api_keys" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "channel_targets_channel_idx" ON "channel_targets" USING btree ("channel_id","target");--> statement-breakpoint
CREATE INDEX "channels_organization_name_idx" ON "channels" USING btree ("organization_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "events_organization_import_key_unique" ON "events" USING btree ("organization_id","import_key") WHERE import_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_organization_timestamp_idx" ON "events" USING btree ("organization_id","timestamp","id");--> statement-breakpoint
CREATE INDEX "events_organization_session_idx" ON "events" USING btree ("organization_id","session_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_conversation_idx" ON "events" USING btree ("organization_id","conversation_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_user_idx" ON "events" USING btree ("organization_id","user_id" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_category_idx" ON "events" USING btree ("organization_id","category" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_organization_type_idx" ON "events" USING btree ("organization_id","type" NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "experiment_variants_experiment_idx" ON "experiment_variants" USING btree ("experiment_id","position");--> statement-breakpoint
CREATE INDEX "experiments_organization_idx" ON "experiments" USING btree ("organization_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "experiments_one_running_per_target" ON "experiments" USING btree ("target_id") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "prompt_tools_tool_idx" ON "prompt_tools" USING btree ("tool_id","prompt_id");--> statement-breakpoint
CREATE INDEX "prompts_organization_name_idx" ON "prompts" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "prompts_organization_idx" ON "prompts" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "sessions_experiment_variant_idx" ON "sessions" USING btree ("experiment_id","variant_id");--> statement-breakpoint
CREATE INDEX "tools_organization_name_idx" ON "tools" USING btree ("organization_id","name");