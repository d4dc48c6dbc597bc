CREATE TABLE "server_processes" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"seen_at" bigint NOT NULL
);
