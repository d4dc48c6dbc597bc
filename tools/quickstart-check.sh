#!/usr/bin/env bash
# Follows the README's quick start on a fresh database: runs `bash scripts/quickstart.sh` as a
# reader would (with a temporary DATABASE_URL and a free PORT), waits until the server is ready,
# then runs every `curl` line it printed and expects HTTP 200 from each, and the console's page at
# the address it printed. (The quick start's other command, `pnpm test`, is CI's test step.)
# QUICKSTART_DATABASE_URL=postgres://... follows it on that (new, empty) database instead, as an
# operator would behind PgBouncer (with DATABASE_PREPARED_STATEMENTS=false).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-server.sh

workdir="$(mktemp -d)"
quickstart_pid=""
cleanup() {
  # setsid made the quick start its own process group: pnpm, tsx and node stop together.
  if [ -n "$quickstart_pid" ]; then
    kill -TERM -- "-$quickstart_pid" 2>/dev/null || true
    wait "$quickstart_pid" 2>/dev/null || true
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

port="$(free_port)"
export DATABASE_URL="${QUICKSTART_DATABASE_URL:-$workdir/agentline.db}" PORT="$port"
setsid bash scripts/quickstart.sh >"$workdir/stdout.log" 2>"$workdir/stderr.log" &
quickstart_pid=$!

fail() {
  echo "quickstart-check: $*" >&2
  tail -n 30 "$workdir/stdout.log" "$workdir/stderr.log" >&2
  exit 1
}

# First run: install, migrate, 100,000 demo events, then the server; allow several minutes.
wait_until_ready "http://127.0.0.1:$port/readyz" "$quickstart_pid" 360 ||
  fail "scripts/quickstart.sh did not bring up a ready server"

mapfile -t curl_lines < <(grep '^curl ' "$workdir/stdout.log")
[ "${#curl_lines[@]}" -eq 3 ] || fail "expected 3 curl lines on stdout, found ${#curl_lines[@]}"
for line in "${curl_lines[@]}"; do
  status="$(eval "$line -o /dev/null -w '%{http_code}'")"
  [ "$status" = 200 ] || fail "got $status from: $line"
  echo "200 <- $line" | sed -E "s/agl_[A-Za-z0-9_]+/agl_.../"
done
console_url="$(sed -nE 's/^The console: (http[^ ]+) .*/\1/p' "$workdir/stderr.log")"
[ -n "$console_url" ] || fail "the quick start printed no console address"
curl -fsS "$console_url" | grep -q '<div id="app">' || fail "$console_url is not the console's page"
echo "200 <- $console_url"
echo "quickstart-check: the quick start's ${#curl_lines[@]} curl lines and its console address answer 200"
