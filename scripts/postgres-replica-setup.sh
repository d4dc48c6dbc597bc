#!/usr/bin/env bash
# Makes a streaming replica of the local PostgreSQL that scripts/postgres-setup.sh prepares: a
# second cluster, `replica`, on 127.0.0.1 at port 5433 (REPLICA_PORT to change it), copied from the
# first with pg_basebackup and following it through a physical replication slot, as a hot standby
# that answers read-only queries (DATABASE_READ_URL). Every database of the first cluster is on it,
# under the same names and roles. Safe to run again: a replica that is already streaming is left
# as it is. Prints the DATABASE_READ_URL to use. Needs root (acting as the postgres user).
# PRIMARY_CLUSTER=<name> PRIMARY_PORT=<port> copies that cluster instead (scripts/postgres-setup.sh's
# CLUSTER and PORT): CI's replica follows a cluster of its own, so that it replays only the writes
# of the tests that read it, not those of every test database.
#
# The role `agentline` may pause and resume the replica's replay (pg_wal_replay_pause/resume, in
# template1 and so in every database created after): the tests hold the replica behind the
# primary that way to see which of the two answered. It may read the replica's statistics
# (pg_read_all_stats), where the tests find the primary the replica follows.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/postgres-cluster.sh

replica_port="${REPLICA_PORT:-5433}"
slot=agentline_replica
replicator=agentline_replicator

prepare_replica() {
  CLUSTER="${PRIMARY_CLUSTER:-}" PORT="${PRIMARY_PORT:-}" bash scripts/postgres-setup.sh >/dev/null
  read -r version cluster primary_port _ < <(pg_lsclusters --no-header |
    awk -v name="${PRIMARY_CLUSTER:-}" 'name == "" || $2 == name { print $1, $2, $3, $4; exit }')
  as_postgres() {
    local port="$1" database="$2"
    shift 2
    su postgres -c "psql -p $port -d $database -v ON_ERROR_STOP=1 -qtAX $*"
  }

  if ! pg_lsclusters --no-header | awk '{ print $2 }' | grep -qx replica; then
    echo "postgres-replica-setup: copying $version/$cluster to a replica on port $replica_port" >&2
    if [ "$(as_postgres "$primary_port" postgres "-c \"SELECT 1 FROM pg_roles WHERE rolname = '$replicator'\"")" != 1 ]; then
      as_postgres "$primary_port" postgres "-c \"CREATE ROLE $replicator LOGIN REPLICATION PASSWORD '$replicator'\""
    fi
    local hba
    hba="$(as_postgres "$primary_port" postgres "-c 'SHOW hba_file'")"
    if ! grep -q "^host replication $replicator " "$hba"; then
      # First match wins in pg_hba.conf: the line goes before the cluster's own.
      sed -i "1i host replication $replicator 127.0.0.1/32 scram-sha-256" "$hba"
      as_postgres "$primary_port" postgres "-c 'SELECT pg_reload_conf()'" >/dev/null
    fi
    pg_createcluster "$version" replica --port "$replica_port" >/dev/null
    local data="/var/lib/postgresql/$version/replica"
    rm -rf "${data:?}"/*
    # -R writes standby.signal and primary_conninfo; -C -S makes the slot that keeps the WAL the
    # replica has not received yet. --checkpoint=fast: the copy starts at a checkpoint, which by
    # default is spread out (checkpoint_completion_target) and so kept CI's replica step waiting
    # for up to minutes; fast writes it at once.
    if ! as_postgres "$primary_port" postgres "-c \"SELECT 1 FROM pg_replication_slots WHERE slot_name = '$slot'\"" | grep -q 1; then
      slot_flag=(-C -S "$slot")
    else
      slot_flag=(-S "$slot")
    fi
    su postgres -c "PGPASSWORD=$replicator pg_basebackup -h 127.0.0.1 -p $primary_port -U $replicator -D $data -R -X stream --checkpoint=fast ${slot_flag[*]}"
    # Long list reads on the replica are not cancelled by the primary's cleanup of rows they read.
    echo "hot_standby_feedback = on" >>"/etc/postgresql/$version/replica/postgresql.conf"
  fi
  start_cluster "$version" replica "$replica_port" 600
  if [ "$(as_postgres "$replica_port" postgres "-c 'SELECT pg_is_in_recovery()'")" != t ]; then
    echo "postgres-replica-setup: the cluster on port $replica_port is not a standby; drop it (pg_dropcluster $version replica --stop) and run this again" >&2
    exit 1
  fi
  for database in template1 agentline; do
    as_postgres "$primary_port" "$database" "-c \"GRANT EXECUTE ON FUNCTION pg_wal_replay_pause(), pg_wal_replay_resume() TO agentline\""
  done
  as_postgres "$primary_port" postgres "-c 'GRANT pg_read_all_stats TO agentline'"
}

# Callers capture stdout as the URL, so everything else goes to stderr.
prepare_replica >&2
echo "postgres://agentline:agentline@127.0.0.1:$replica_port/agentline"
