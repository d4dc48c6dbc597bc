#!/usr/bin/env bash
# Proves the deployable folder stands alone: builds it, copies it outside the repository, and on a
# fresh database there creates a key and imports events with the folder's own CLI, starts the
# server with plain `node`, and expects 200 from /readyz, an authenticated events list holding
# the imported events, the console and the API reference (whose package comes without its own
# dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-server.sh

workdir="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$workdir"
}
trap cleanup EXIT

bash scripts/deploy-build.sh deploy/server
cp -a deploy/server "$workdir/server"
cd "$workdir"
export DATABASE_URL="$workdir/data/agentline.db" LOG_LEVEL=warn HOST=127.0.0.1
cli() { node server/dist/cli/main.js "$@"; }

cli migrate
cli org create "Deploy check" >/dev/null
cli role create --org "Deploy check" --name admin --all >/dev/null
key="$(cli key create --org "Deploy check" --role admin --name deploy-check)"
printf '%s\n' '{"import_key":"deploy-1","timestamp":"2026-05-01T00:00:00Z"}' \
  '{"import_key":"deploy-2","timestamp":"2026-05-01T00:00:01Z"}' >events.ndjson
cli events import events.ndjson --org "Deploy check"

port="$(free_port)"
PORT="$port" node server/dist/main.js >server.log 2>&1 &
server_pid=$!

base="http://127.0.0.1:$port"
wait_until_ready "$base/readyz" "$server_pid" 30 || { cat server.log >&2; exit 1; }

expect_200() {
  local status
  status="$(curl -s -o response.json -w '%{http_code}' "$@")"
  if [ "$status" != 200 ]; then
    echo "deploy-check: ${*: -1} answered $status" >&2
    cat response.json server.log >&2
    exit 1
  fi
}
expect_200 "$base/readyz"
expect_200 -H "Service-API-Key: $key" "$base/api/v1/events/?limit=5"
grep -q '"total_count":2' response.json || {
  echo "deploy-check: the events list does not hold the 2 imported events" >&2
  cat response.json >&2
  exit 1
}
expect_200 "$base/console/"
grep -q '<div id="app">' response.json || { echo "deploy-check: /console/ is not the console's page" >&2; exit 1; }
expect_200 "$base/docs"
expect_200 "$base/docs/scalar.js"
# The API reference's package is installed without its own dependencies (.pnpmfile.cjs): its
# browser bundle above needs none, so pnpm's folder for it holds the package alone.
beside="$(cd server/node_modules/.pnpm/@scalar+api-reference@*/node_modules && find . -mindepth 1 -maxdepth 2 ! -name @scalar)"
[ "$beside" = ./@scalar/api-reference ] ||
  { echo "deploy-check: @scalar/api-reference was installed with dependencies: $beside" >&2; exit 1; }
echo "deploy-check: the deployed folder imports events, answers /readyz, lists them, serves the console and the API reference (200)"
