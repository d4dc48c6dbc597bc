#!/usr/bin/env bash
# Fails when a schema module and its committed migrations disagree: drizzle-kit generates from
# src/db/schema/sqlite.ts (SQLite) and src/db/schema/postgres.ts (PostgreSQL) against copies of the
# committed migrations; any migration it would write means a schema change without one.
#   pnpm migrations:check
set -euo pipefail
cd "$(dirname "$0")/../apps/server"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for entry in sqlite:sqlite:src/db/schema/sqlite.ts:drizzle.config.ts \
  postgres:postgresql:src/db/schema/postgres.ts:drizzle.postgres.config.ts; do
  IFS=: read -r folder dialect schema config <<<"$entry"
  cp -r "drizzle/$folder" "$work/$folder"
  before="$(ls "$work/$folder" | wc -l)"
  # drizzle-kit takes --out relative to the working directory.
  pnpm -s exec drizzle-kit generate --dialect "$dialect" --schema "./$schema" \
    --out "$(realpath --relative-to=. "$work/$folder")" >"$work/$folder.log" 2>&1 || {
    cat "$work/$folder.log" >&2
    echo "migrations-check: drizzle-kit failed on $schema" >&2
    exit 1
  }
  if [ "$(ls "$work/$folder" | wc -l)" != "$before" ]; then
    echo "migrations-check: $schema differs from drizzle/$folder; drizzle-kit would add:" >&2
    for file in "$work/$folder"/*.sql; do
      [ -e "drizzle/$folder/$(basename "$file")" ] || { echo "--- $(basename "$file")" >&2; cat "$file" >&2; echo >&2; }
    done
    echo "write the migration: pnpm --filter @agentline/server exec drizzle-kit generate --config $config --name <what it does>, then review and commit it" >&2
    status=1
  else
    echo "migrations-check: drizzle/$folder matches $schema"
  fi
done
exit "$status"
