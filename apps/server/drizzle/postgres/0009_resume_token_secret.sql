CREATE TABLE "resume_token_secret" (
	"id" integer PRIMARY KEY NOT NULL,
	"secret" text COLLATE "C" NOT NULL,
	"decimal_through" bigint NOT NULL,
	"created_at" text COLLATE "C" DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) NOT NULL,
	CONSTRAINT "resume_token_secret_one_row" CHECK ("resume_token_secret"."id" = 1)
);
