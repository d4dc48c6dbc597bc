-- A routed session's count, planned once per connection instead of once per session. Called from
-- a PL/pgSQL trigger, a LANGUAGE sql function is not inlined and its statement is parsed and
-- planned anew at every call: a third of a routed session's insert. PL/pgSQL keeps the plan of
-- its statement for the connection's life. Same rows as migration 0008's.
CREATE OR REPLACE FUNCTION "experiment_session_count_add"(session "sessions", delta integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "experiment_session_counts"
    ("experiment_id", "slot_start", "variant_id", "writer", "session_count")
  SELECT session."experiment_id",
    substr(session."created_at", 1, 14)
      || lpad((substr(session."created_at", 15, 2)::integer / 15 * 15)::text, 2, '0')
      || ':00.000Z',
    session."variant_id", pg_backend_pid(), delta
  WHERE session."experiment_id" IS NOT NULL AND session."variant_id" IS NOT NULL
  ON CONFLICT ("experiment_id", "slot_start", "variant_id", "writer")
    DO UPDATE SET "session_count" = "experiment_session_counts"."session_count" + delta;
END
$$;
