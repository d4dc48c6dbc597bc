CREATE TABLE "rate_limit_budgets" (
	"api_key_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"refilled_at" bigint NOT NULL,
	"last_lease" integer NOT NULL
);
