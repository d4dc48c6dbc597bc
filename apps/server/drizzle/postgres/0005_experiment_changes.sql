CREATE TABLE "experiment_changes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "experiment_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"organization_id" integer NOT NULL,
	"experiment_id" integer NOT NULL,
	"occurred_at" text COLLATE "C" NOT NULL,
	"action" text COLLATE "C" NOT NULL,
	"actor_type" text COLLATE "C" NOT NULL,
	"actor_key_id" text COLLATE "C",
	"actor_key_name" text COLLATE "C",
	"request_id" text COLLATE "C",
	"changes" json NOT NULL
);
--> statement-breakpoint
ALTER TABLE "experiment_changes" ADD CONSTRAINT "experiment_changes_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "experiment_changes_experiment_idx" ON "experiment_changes" USING btree ("organization_id","experiment_id","id");