CREATE TABLE "event_stream_slots" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"api_key_id" text COLLATE "C" NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "event_stream_slots_api_key_idx" ON "event_stream_slots" USING btree ("api_key_id");