CREATE TABLE "webhook_attempts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_attempts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" integer NOT NULL,
	"organization_id" integer NOT NULL,
	"webhook_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"position" text COLLATE "C",
	"attempt" integer NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"response_status" integer,
	"error" text COLLATE "C",
	"duration_ms" integer NOT NULL,
	"attempted_at" text COLLATE "C" NOT NULL,
	"next_attempt_at" text COLLATE "C",
	CONSTRAINT "webhook_attempts_status_check" CHECK ("webhook_attempts"."status" IN ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_endpoints_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"url" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C",
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text COLLATE "C",
	"search_fields" json NOT NULL,
	"search_field_values" json NOT NULL,
	"message_types" json NOT NULL,
	"secret" text COLLATE "C" NOT NULL,
	"previous_secret" text COLLATE "C",
	"previous_secret_expires_at" text COLLATE "C",
	"event_position" bigint NOT NULL,
	"history_position" integer NOT NULL,
	"lease_owner" text COLLATE "C",
	"lease_expires_at" text COLLATE "C",
	"failing_since" text COLLATE "C",
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	"updated_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_messages" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_messages_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" integer NOT NULL,
	"organization_id" integer NOT NULL,
	"webhook_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"position" text COLLATE "C",
	"payload" text COLLATE "C" NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"status" text COLLATE "C" DEFAULT 'pending' NOT NULL,
	"next_attempt_at" text COLLATE "C",
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	CONSTRAINT "webhook_messages_status_check" CHECK ("webhook_messages"."status" IN ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_attempted_at_idx" ON "webhook_attempts" USING btree ("attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_organization_idx" ON "webhook_endpoints" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "webhook_messages_due_idx" ON "webhook_messages" USING btree ("endpoint_id","next_attempt_at") WHERE status = 'pending';