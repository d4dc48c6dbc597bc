#!/usr/bin/env bash
# Puts PgBouncer in transaction pooling mode in front of the local PostgreSQL that
# scripts/postgres-setup.sh prepares, as managed PostgreSQL services do: installs it if missing
# (Debian or Ubuntu), listens on 127.0.0.1 at port 6432 (PGBOUNCER_PORT to change it), and passes
# any database name through to PostgreSQL (the tests make a database per test file). Safe to run
# again: a PgBouncer it started before reloads the configuration instead. Prints the DATABASE_URL
# to use. Needs root (apt-get, and acting as the postgres user: PgBouncer refuses to run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

port="${PGBOUNCER_PORT:-6432}"
config_dir=/etc/pgbouncer
config="$config_dir/agentline.ini"
users="$config_dir/agentline-users.txt"
pidfile=/var/run/postgresql/agentline-pgbouncer.pid

prepare_pgbouncer() {
  bash scripts/postgres-setup.sh >/dev/null
  read -r _ _ postgres_port _ < <(pg_lsclusters --no-header | awk '{ print $1, $2, $3, $4; exit }')

  if ! command -v pgbouncer >/dev/null 2>&1; then
    echo "pgbouncer-setup: installing PgBouncer (apt-get)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
  fi

  # The password in clear: PgBouncer answers the client's SCRAM exchange with it and logs in to
  # PostgreSQL with it in turn (a SCRAM secret from pg_authid would only be passed through).
  echo '"agentline" "agentline"' >"$users"
  cat >"$config" <<EOF
[databases]
; Any database name, passed through as asked.
* = host=127.0.0.1 port=$postgres_port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir = /var/run/postgresql
pidfile = $pidfile
logfile = /var/log/postgresql/agentline-pgbouncer.log
auth_type = scram-sha-256
auth_file = $users
; A server connection serves one transaction, then the next client's: no session state lasts.
pool_mode = transaction
; Clients are cheap: every server process opens its own pool of connections.
max_client_conn = 1000
; Server connections per database: a server process's pool at its default size.
default_pool_size = 10
; The PostgreSQL server is shared (max_connections 100 by default), and every test database has a
; pool of its own: at most this many server connections in all, idle ones closed soon.
max_user_connections = 40
server_idle_timeout = 10
EOF
  chown postgres:postgres "$config" "$users"
  chmod 640 "$config" "$users"

  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    kill -HUP "$(cat "$pidfile")"
  else
    echo "pgbouncer-setup: starting PgBouncer on 127.0.0.1:$port" >&2
    su postgres -s /bin/sh -c "pgbouncer -d $config"
  fi
  for _ in $(seq 1 30); do
    PGPASSWORD=agentline psql -h 127.0.0.1 -p "$port" -U agentline -d agentline -qtAX \
      -c 'SELECT 1' >/dev/null 2>&1 && return
    sleep 1
  done
  echo "pgbouncer-setup: PgBouncer did not answer on 127.0.0.1:$port (see /var/log/postgresql/agentline-pgbouncer.log)" >&2
  exit 1
}

if [ "$(id -u)" != 0 ]; then
  echo "pgbouncer-setup: run as root (sudo bash scripts/pgbouncer-setup.sh)" >&2
  exit 1
fi
# Callers capture stdout as the URL, so everything else goes to stderr.
prepare_pgbouncer >&2
echo "postgres://agentline:agentline@127.0.0.1:$port/agentline"
