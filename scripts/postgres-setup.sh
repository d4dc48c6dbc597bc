#!/usr/bin/env bash
# Makes a local PostgreSQL ready for Agentline: installs it if missing (Debian or Ubuntu), starts
# its first cluster on 127.0.0.1 (at the cluster's port, 5432 by default), and creates the role
# `agentline` (password `agentline`, may create databases: the tests make one per test file)
# owning the database `agentline`. Safe to run again. CLUSTER=<name> PORT=<port> prepares that
# cluster instead, made with pg_createcluster if missing (CI's replica follows one of its own:
# scripts/postgres-replica-setup.sh, PRIMARY_CLUSTER).
# Prints the DATABASE_URL to use. Needs root (apt-get, and acting as the postgres user).
set -euo pipefail
source "$(dirname "$0")/lib/postgres-cluster.sh"

prepare_cluster() {
  if [ "$(id -u)" != 0 ]; then
    echo "postgres-setup: run as root (sudo bash scripts/postgres-setup.sh)" >&2
    exit 1
  fi

  if ! command -v pg_lsclusters >/dev/null 2>&1; then
    echo "postgres-setup: installing PostgreSQL (apt-get)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi

  read -r version cluster port _ < <(pg_lsclusters --no-header | awk '{ print $1, $2, $3, $4; exit }')
  if [ -z "${version:-}" ]; then
    echo "postgres-setup: no PostgreSQL cluster found; create one with pg_createcluster" >&2
    exit 1
  fi
  if [ -n "${CLUSTER:-}" ]; then
    if ! pg_lsclusters --no-header | awk '{ print $2 }' | grep -qx "$CLUSTER"; then
      echo "postgres-setup: creating the cluster $version/$CLUSTER on port ${PORT:?CLUSTER needs PORT}" >&2
      pg_createcluster "$version" "$CLUSTER" --port "$PORT" >/dev/null
    fi
    read -r version cluster port _ < <(pg_lsclusters --no-header | awk -v name="$CLUSTER" '$2 == name { print $1, $2, $3, $4; exit }')
  fi
  start_cluster "$version" "$cluster" "$port" 600

  as_postgres() { su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -qtAX $*"; }
  if [ "$(as_postgres "-c \"SELECT 1 FROM pg_roles WHERE rolname = 'agentline'\"")" != 1 ]; then
    as_postgres "-c \"CREATE ROLE agentline LOGIN CREATEDB PASSWORD 'agentline'\""
  fi
  if [ "$(as_postgres "-c \"SELECT 1 FROM pg_database WHERE datname = 'agentline'\"")" != 1 ]; then
    as_postgres "-c \"CREATE DATABASE agentline OWNER agentline\""
  fi
}

# Callers capture stdout as the URL, so everything else goes to stderr: pg_ctlcluster, for one,
# prints "Removed stale pid file." on stdout after an unclean shutdown.
prepare_cluster >&2
echo "postgres://agentline:agentline@127.0.0.1:$port/agentline"
