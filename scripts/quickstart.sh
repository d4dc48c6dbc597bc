#!/usr/bin/env bash
# Quick start on a fresh machine: install, create a demo organization on the embedded SQLite
# database (first run only), print a key, curl lines and the console's address, then serve on
# http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pnpm.sh
ensure_pnpm

pnpm install --frozen-lockfile
# The console the server serves at /console (apps/console), built once per install.
pnpm --filter console build >/dev/null
database="${DATABASE_URL:-apps/server/data/agentline.db}"
case "$database" in
  postgres://* | postgresql://*) first_run=1 ;;
  *) [ -e "$database" ] && first_run=0 || first_run=1 ;;
esac
pnpm agentline migrate
if [ "$first_run" = 1 ]; then
  pnpm agentline demo
else
  echo "Using the existing database $database. For a fresh demo organization and key: pnpm agentline demo" >&2
fi
exec pnpm start
