#!/usr/bin/env bash
# A fleet to try on one machine, as docs/deployment.md deploys one: PostgreSQL and its streaming
# replica, PgBouncer in transaction mode, three server processes and HAProxy
# in front of them (deploy/haproxy.cfg), all on 127.0.0.1. Prints HAProxy's address and the API
# key of a new demo organization, then serves until Ctrl-C, which stops the servers and HAProxy
# (PostgreSQL keeps running).
#
#   bash scripts/fleet.sh           start the fleet and serve (pnpm fleet)
#   bash scripts/fleet.sh restart   from another terminal: restart the three servers one at a
#                                   time, each drained in HAProxy first (pnpm fleet restart)
#
# FLEET_PORT (8080) is HAProxy's port; the servers take the three after it. FLEET_DIR (.fleet in
# the repository) holds the processes' ids, logs and HAProxy's runtime API socket.
# FLEET_DRAIN_SECONDS (5) bounds how long a restart waits for a drained server's connections to
# end. Needs root, as the PostgreSQL setup scripts do.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pnpm.sh
source scripts/lib/local-server.sh

FLEET_PORT="${FLEET_PORT:-8080}"
FLEET_DIR="${FLEET_DIR:-$PWD/.fleet}"
FLEET_DRAIN_SECONDS="${FLEET_DRAIN_SECONDS:-5}"
SERVERS=(1 2 3)
SOCKET="$FLEET_DIR/haproxy.sock"
# The server finishes its requests for up to 10 s after SIGTERM (apps/server/src/main.ts).
STOP_SECONDS=15

say() { printf 'fleet: %s\n' "$*" >&2; }
fail() {
  say "$*"
  exit 1
}

server_port() { echo $((FLEET_PORT + $1)); }

# Whether the process lives (a zombie, exited but not yet reaped by its parent, does not).
alive() {
  local state
  state="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1
  [[ "$state" != Z* ]]
}

pid_of() { cat "$FLEET_DIR/$1.pid" 2>/dev/null || true; }

# Sends SIGTERM and waits for the process to exit; SIGKILL past STOP_SECONDS.
stop_process() {
  local name="$1" pid="$2" deadline=$((SECONDS + STOP_SECONDS))
  kill -TERM "$pid" 2>/dev/null || return 0
  while alive "$pid"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      say "$name (pid $pid) did not stop within ${STOP_SECONDS}s of SIGTERM; killing it (its log: $FLEET_DIR/$name.log)"
      kill -KILL "$pid" 2>/dev/null || true
      return 0
    fi
    sleep 0.2
  done
}

# One command to HAProxy's runtime API (the stats socket of deploy/haproxy.cfg); prints the
# answer. Through node, which the server needs anyway, so that no socat is needed.
haproxy_api() {
  node -e '
    const [path, command] = process.argv.slice(1);
    const socket = require("node:net").createConnection(path, () => socket.end(`${command}\n`));
    socket.on("error", (error) => {
      console.error(`HAProxy runtime API at ${path}: ${error.message}`);
      process.exit(1);
    });
    socket.pipe(process.stdout);
  ' "$SOCKET" "$1"
}

# A column of `show stat` (scur: connections now; status: UP, DOWN, DRAIN...) for server s<n>.
server_stat() {
  haproxy_api "show stat" | awk -F, -v server="s$1" -v column="$2" '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == column) c = i; next }
    $1 == "agentline" && $2 == server { print $c }'
}

# Waits until HAProxy's health checks see server s<n> up (two in a row, a second apart).
wait_until_up() {
  local deadline=$((SECONDS + 30))
  until [ "$(server_stat "$1" status)" = UP ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "HAProxy does not see s$1 up after 30 s: its log is $FLEET_DIR/s$1.log"
    sleep 0.5
  done
}

# Starts server process n on its port, in a session of its own so that a Ctrl-C in this terminal
# reaches this script alone, which then stops the servers in order.
start_server() {
  local n="$1"
  (
    set -a
    source "$FLEET_DIR/env"
    PORT="$(server_port "$n")"
    cd apps/server
    exec setsid node dist/main.js
  ) >>"$FLEET_DIR/s$n.log" 2>&1 </dev/null &
  echo $! >"$FLEET_DIR/s$n.pid"
  wait_until_ready "http://127.0.0.1:$(server_port "$n")/healthz" "$!" 60 ||
    fail "server s$n did not start; the end of its log ($FLEET_DIR/s$n.log):$(printf '\n'; tail -n 5 "$FLEET_DIR/s$n.log")"
}

stop_fleet() {
  local n pid
  for n in "${SERVERS[@]}"; do
    pid="$(pid_of "s$n")"
    [ -n "$pid" ] || continue
    say "stopping server s$n (SIGTERM: it ends its event streams and finishes its requests)"
    stop_process "s$n" "$pid"
    rm -f "$FLEET_DIR/s$n.pid"
  done
  pid="$(pid_of haproxy)"
  if [ -n "$pid" ]; then
    say "stopping HAProxy"
    stop_process haproxy "$pid"
    rm -f "$FLEET_DIR/haproxy.pid" "$SOCKET"
  fi
  rm -f "$FLEET_DIR/fleet.pid"
  say "stopped. PostgreSQL and its replica, and PgBouncer, keep running (pg_lsclusters shows them)"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Refuses to start beside a running fleet or on ports in use, before anything is started.
check_can_start() {
  command -v haproxy >/dev/null || fail "haproxy is not installed: apt-get install -y haproxy"
  local running
  running="$(pid_of haproxy)"
  if [ -n "$running" ] && alive "$running"; then
    fail "a fleet already runs from $FLEET_DIR (HAProxy pid $running): stop it with Ctrl-C in its terminal, or kill -INT $(pid_of fleet)"
  fi
  local port
  for port in "$FLEET_PORT" $((FLEET_PORT + 1)) $((FLEET_PORT + 2)) $((FLEET_PORT + 3)); do
    if port_in_use "$port"; then
      fail "127.0.0.1:$port is in use: stop what listens there, or set FLEET_PORT (HAProxy's port; the servers take the three after it)"
    fi
  done
}

# The operator CLI, bundled as the servers are, on the primary itself (never through PgBouncer).
cli() { (cd apps/server && node dist/cli/main.js --database "$PRIMARY_URL" "$@"); }

start_fleet() {
  mkdir -p "$FLEET_DIR"
  echo $$ >"$FLEET_DIR/fleet.pid"

  say "PostgreSQL on 127.0.0.1 (scripts/postgres-setup.sh)"
  local read_url database_url
  PRIMARY_URL="$(bash scripts/postgres-setup.sh)" || fail "PostgreSQL is not ready: see the message above"
  say "its streaming replica (scripts/postgres-replica-setup.sh)"
  read_url="$(bash scripts/postgres-replica-setup.sh)" || fail "the replica is not ready: see the message above"
  say "PgBouncer in transaction mode in front of PostgreSQL (scripts/pgbouncer-setup.sh)"
  database_url="$(bash scripts/pgbouncer-setup.sh)" || fail "PgBouncer is not ready: see the message above"

  ensure_pnpm
  say "installing dependencies and building the server (apps/server/dist), as deployed"
  pnpm install --frozen-lockfile >/dev/null || fail "pnpm install failed: run it by hand to see why"
  pnpm --filter @agentline/server build >/dev/null || fail "the server's build failed: run pnpm --filter @agentline/server build to see why"
  # Once, before the servers, which would otherwise each wait for the others' migration.
  cli migrate >/dev/null || fail "the database's migration failed: see the message above"

  local metrics_token
  metrics_token="$(node -e 'console.log(require("node:crypto").randomBytes(24).toString("hex"))')"
  # The servers' settings, read again by a restart. The URLs hold the database's password.
  (
    umask 077
    cat >"$FLEET_DIR/env" <<EOF
HOST=127.0.0.1
DATABASE_URL=$database_url
DATABASE_PREPARED_STATEMENTS=false
DATABASE_READ_URL=$read_url
METRICS_TOKEN=$metrics_token
TRUSTED_PROXIES=127.0.0.1
EOF
  )
  local n
  for n in "${SERVERS[@]}"; do
    say "server s$n on 127.0.0.1:$(server_port "$n") (log: $FLEET_DIR/s$n.log)"
    start_server "$n"
  done

  say "HAProxy on 127.0.0.1:$FLEET_PORT (deploy/haproxy.cfg)"
  rm -f "$SOCKET"
  AGENTLINE_LISTEN="127.0.0.1:$FLEET_PORT" AGENTLINE_HAPROXY_SOCKET="$SOCKET" \
    AGENTLINE_SERVER_1="127.0.0.1:$(server_port 1)" AGENTLINE_SERVER_2="127.0.0.1:$(server_port 2)" \
    AGENTLINE_SERVER_3="127.0.0.1:$(server_port 3)" \
    setsid haproxy -db -f deploy/haproxy.cfg >>"$FLEET_DIR/haproxy.log" 2>&1 </dev/null &
  echo $! >"$FLEET_DIR/haproxy.pid"
  wait_until_ready "http://127.0.0.1:$FLEET_PORT/healthz" "$!" 30 ||
    fail "HAProxy did not start; its log ($FLEET_DIR/haproxy.log):$(printf '\n'; tail -n 5 "$FLEET_DIR/haproxy.log")"
  for n in "${SERVERS[@]}"; do wait_until_up "$n"; done

  say "a demo organization and its admin key (agentline demo)"
  local demo
  demo="$(PORT="$FLEET_PORT" cli demo --events 1000 2>>"$FLEET_DIR/demo.log")" ||
    fail "agentline demo failed; its messages: $FLEET_DIR/demo.log"
  local key="${demo%%$'\n'*}"
  cat <<EOF

The fleet answers at http://127.0.0.1:$FLEET_PORT (HAProxy, round robin over three servers).
API key: $key
Try:
${demo#*$'\n'}
Each process's /metrics: curl -H 'Authorization: Bearer $metrics_token' http://127.0.0.1:$(server_port 1)/metrics
Rolling restart, one process at a time: bash scripts/fleet.sh restart (in another terminal)
Ctrl-C stops the servers and HAProxy; PostgreSQL keeps running.

EOF
}

restart_fleet() {
  local haproxy
  haproxy="$(pid_of haproxy)"
  [ -n "$haproxy" ] && alive "$haproxy" ||
    fail "no fleet runs from $FLEET_DIR: start one with bash scripts/fleet.sh"
  exec 9>"$FLEET_DIR/restart.lock"
  flock -n 9 || fail "a rolling restart of this fleet is already under way"
  local n pid started deadline
  for n in "${SERVERS[@]}"; do
    started=$SECONDS
    say "s$n: drain (HAProxy sends it no new requests)"
    haproxy_api "set server agentline/s$n state drain" >/dev/null
    # An open event stream holds its connection until the server ends it at SIGTERM: with
    # streams open, this waits out the bound.
    deadline=$((SECONDS + FLEET_DRAIN_SECONDS))
    while [ "$(server_stat "$n" scur)" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    say "s$n: SIGTERM, with $(server_stat "$n" scur) connection(s) open (it ends its event streams, whose clients resume on another server, and finishes its requests)"
    pid="$(pid_of "s$n")"
    [ -z "$pid" ] || stop_process "s$n" "$pid"
    say "s$n: starting again"
    start_server "$n"
    haproxy_api "set server agentline/s$n state ready" >/dev/null
    wait_until_up "$n"
    say "s$n: up and ready in HAProxy again ($((SECONDS - started)) s)"
  done
  say "rolling restart done"
}

case "${1:-start}" in
  start)
    check_can_start
    trap stop_fleet EXIT
    # Ctrl-C is how a fleet is meant to end: a clean stop exits 0 (pnpm would call 130 a failure).
    trap 'exit 0' INT TERM
    start_fleet
    # `wait` returns as soon as a signal arrives, where a foreground sleep would finish first.
    while alive "$(pid_of haproxy)"; do
      sleep 1 &
      wait $! || true
    done
    fail "HAProxy exited; its log: $FLEET_DIR/haproxy.log"
    ;;
  restart) restart_fleet ;;
  *) fail "unknown command \"$1\": bash scripts/fleet.sh [start|restart]" ;;
esac
