ALTER TABLE "experiments" ADD COLUMN "end_at" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "max_sessions" integer;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "ended_reason" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "routed_sessions" integer DEFAULT 0 NOT NULL;