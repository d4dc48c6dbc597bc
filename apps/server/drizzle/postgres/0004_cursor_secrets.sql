CREATE TABLE "cursor_secrets" (
	"id" integer PRIMARY KEY NOT NULL,
	"secret" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL
);
